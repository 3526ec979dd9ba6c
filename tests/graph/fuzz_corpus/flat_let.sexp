;;args [3]
(def shadow (a) (let x 1 (tuple (let x 2 y (* x a) y) x)))
(def main (a)
 (let
  v (variable 1)
  u (assign_add v a)
  b (+ a 1)
  c (* b (read v))
  b (- c b)
  (tuple b c (shadow a) ((lambda (a) (* a 10)) b))))
