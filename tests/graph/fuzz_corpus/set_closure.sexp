;;args [5]
; set! of a var from nested lambdas: a while body and a closure called later (a cell)
(def main (n)
  (var acc 0
    (begin
      (while (lambda (i) (< i n))
             (lambda (i) (begin (set! acc (+ acc i)) (tuple (+ i 1))))
             (tuple 0))
      (let before acc
        (let inc (lambda (k) (set! acc (+ acc k)))
          (begin (inc 100) (tuple before acc)))))))
