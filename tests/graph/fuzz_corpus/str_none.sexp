; strings, floats, none
(def f () (begin (print "a\"b\\c\n" 1e-3 inf nan -3 none) (tuple 2.0 -0.5 none "s")))
