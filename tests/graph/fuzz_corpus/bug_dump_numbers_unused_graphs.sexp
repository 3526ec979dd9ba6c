;;noopt[[1тмси,4,5,6]]
(def f (x)
  (let y (reshape x (tuple 2 3))
    (tuple ;;args [[[1.0,".0],[3.0,4.0]]]
;;grad 0
(def f ((x float64 (2 2)))
  (sum (softmax (matmul x (transpose x)) -1)))
(concat y y 0) (stack y y) (slice x 2 4) (gather x (arange 3)) (one_hot (arange 3) 4)
      0    (argmax y 1) (mean (cast y "float32")) (shape y) (len y) (size y))))
