;;args [10]
(def runX (in1)
 (begin
  (let x0 (* in1 1)
   (let x1 (* in1 x0)
    x1))))
