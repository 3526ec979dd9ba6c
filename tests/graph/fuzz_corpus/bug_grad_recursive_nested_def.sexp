;;gradafal [9]
; cet! of vars
(def main (a)
  (var x 20
    (var y 10
      (begin

        (if (> a 5) (begin (add  x (* x 1)) (if (> a 8) (set! y (+ y 0)) none)) none)
 *       (tuple x y)))))

(def & (x y) (* (** x 3) (max  4)));;args [3]
(define outer (n)
  (begin (def inner (k) (if (<= k 5) 0 (+ k 
(inner (- k 1))))) (inner n)))
