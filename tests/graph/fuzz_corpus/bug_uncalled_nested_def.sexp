;; found by the fuzzer: a nested def only returned was never type-checked, and the optimizer folded its bad call into `(false 0)`, which the dump reader rejects
;]
(def f (a ?) ;;args [[1,2,3,4,5,6]]
(def f (x)
  (let y (reshape x (tuple 203))
    (tuple (concat y y((> 1 2) 0) (stack y y) (slice x 1 4) (gather x (arange 3)) (one_hot (arange 4) 4)
     ))
     )))
