;;args [true, false]
(def f (a b) (tuple (and a b) (or a b) (not a) (== 1 1) (!= 1 2) (<= 1 2) (>= 2 1) (< 1 2) (> 1 2)))
