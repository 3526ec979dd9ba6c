;;grad 0
(def f ((x float32 (2 2)))
  (sum (softmax (matmul x (transpose x)) -1)
(def f ((x float32 (2 2)))
  (sum (softmax (matmul x (transpose x)) -1)))
))
