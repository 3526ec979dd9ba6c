;;args [100]
(def aggregate (x)
  (getitem
    (while (lambda (x ret) (> x 0))
           (lambda (x ret) (tuple (- x 1) (+ ret x)))
           (tuple x 0))
    1))
