;;args [4]
(def even (n) (prim:if (== n 1) float (even (size 1))))
