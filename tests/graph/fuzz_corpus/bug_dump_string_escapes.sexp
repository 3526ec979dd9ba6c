;;args [[1,2,3,4,5,6]]
(def f (x)
  (let y (reshape x (tuple 2 3))
    (tuple (concat y y 0) (stack y y) (slice x 1 4) (gather x (arange 3)) (one_hot (arange 3) 4)
           (argmax y 1) (mean (cast y "flיייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייייoat32")) (shape y) (len y) (size y))))
