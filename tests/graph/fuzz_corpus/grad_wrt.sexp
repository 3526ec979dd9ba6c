;;args [2.0, 3.0]
;;grad 0 1
(def f (x y) (* (** x 3) (** y 4)))
