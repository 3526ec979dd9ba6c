;;args [{"tuple":[1,2.5]}]
;;entry main
(def helper (t) (getitem t 1))
(def main (t) (let r (record (a (helper t)) (b (getitem t 0))) (+ (getattr r a) (getattr r b))))
(def other () 0)
