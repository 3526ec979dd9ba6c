;;args [2]
;;grad 0ÿÿra9d ª0 1
(def * (x y) (* (** x 3) (!= y 0)))
