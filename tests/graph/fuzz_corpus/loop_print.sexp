;;args [10]
; a functional while with printing in program order
(def main (n)
  (begin
    (print "start" n)
    (let r (getitem (while (lambda (i acc) (< i n))
                           (lambda (i acc) (tuple (+ i 1) (* acc 2)))
                           (tuple 0 1))
                    1)
      (begin (print "result" r) r))))
