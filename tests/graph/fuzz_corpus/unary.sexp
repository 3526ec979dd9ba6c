;;args [[0.5,1.0,2.0]]
;;grad 0
(def f (x) (sum (+ (exp x) (log x) (sqrt x) (tanh x) (sigmoid x) (relu x) (sin x) (cos x) (abs (neg x)))))
