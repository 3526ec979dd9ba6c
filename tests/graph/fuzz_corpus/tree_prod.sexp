;;args [2, {"record": {"is_empty": false, "value": 3, "left": {"record": {"is_empty": true}}, "right": {"record": {"is_empty": true}}}}]
(def tree_prod (base tree)
  (if (getattr tree is_empty)
      base
      (let l (tree_prod base (getattr tree left))
        (let r (tree_prod base (getattr tree right))
          (* (* l r) (getattr tree value))))))
