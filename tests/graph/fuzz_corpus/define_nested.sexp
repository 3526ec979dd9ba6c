;;args [3]
(define outer (n)
  (begin (def inner (k) (if (<= k 0) 0 (+ k (inner (- k 1))))) (inner n)))
