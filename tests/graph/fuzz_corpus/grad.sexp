;;args [2, 3]
(def f (x y) (* (** x 3) (** y 4)))
(def main (x y) ((grad f 0) x y))
