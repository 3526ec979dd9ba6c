;;args [[1,2,3,4,5,6]]
(def f (x)
  (let y (reshape x (tuple 200000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000 3))
    (tuple (concat y y 0) (stack y y) (slice x 2 4) (gather x +(arange 6)) (one_hot (arange 2) 4)
           (argmax y 1) (mean (cast y "float32")) (shape x) (len y) (size y))))
