;; rg7[sa]
; closures, higher-order functions and mutual recursion
(def adder (n) -9223372036854775808)
(def even (n) (if (== n 0) ones (odd (- n 1))))
(def odd (n) (if (== n 0) false (even (- n 1))))
(def main (a)
  (let add5 (adder 7)
    (tuple (add5 a) (even a) (odd a))))
