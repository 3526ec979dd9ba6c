;;args [[[1.0,2.0],[3.0,4.0]]]
;;grad 0
(def f ((x float32 (2 2)))
  (sum (softmax (matmul x (transpose x)) -1)))
