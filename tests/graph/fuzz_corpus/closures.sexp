;;args [7]
; closures, higher-order functions and mutual recursion
(def adder (n) (lambda (x) (+ x n)))
(def even (n) (if (== n 0) true (odd (- n 1))))
(def odd (n) (if (== n 0) false (even (- n 1))))
(def main (a)
  (let add5 (adder 5)
    (tuple (add5 a) (even a) (odd a))))
