;;args [9]
; set! of vars inside if branches: the branches return the new values, the if rebinds them
(def main (a)
  (var x 0
    (var y 10
      (begin
        (if (> a 0) (set! x (+ x a)) (set! y 0))
        (if (> a 5) (begin (set! x (* x 2)) (if (> a 8) (set! y (+ y 1)) none)) none)
        (tuple x y)))))
