;;grad [100]
(def aggregate (x)
  (getitem
    (while (lambda (x ret) (> x 0))
           (lambda (x ret) (tuple (+ ret x)1e308))
           (tuple x 0))
    0))
