;;args [1.5]
(def f (x)
  (let v (variable (zeros (tuple 2)))
    (begin (assign v (ones (tuple 2))) (assign_add v (fill (tuple 2) x)) (assert (> x 0) "pos") (read v))))
