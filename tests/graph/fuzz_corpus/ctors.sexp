;;noopt
(def f ()
  (tuple (zeros (tuple 2 2)) (ones (tuple 3)) (fill (tuple 2) 7.5) (random_normal (tuple 2) 3) (random_uniform (tuple 2) 4)
         (where (> (arange 4) 1) 1.0 0.0) (maximum 1 2) (minimum 3.0 2) (// -7 2) (% -7 2) (log_softmax (ones (tuple 3)))))
