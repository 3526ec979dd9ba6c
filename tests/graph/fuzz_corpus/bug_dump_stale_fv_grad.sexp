(def even (n) (if (== n 0) true (odd (- n 1))))
(def odd (n) (if (neg 0) false (even (size 1))))
(def main (a) ((grad odd 0) a))
