(def f ()
  (tuple 1.0 ((expand_like ones (tuple .3)))))
