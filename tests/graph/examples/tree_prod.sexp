(def tree_prod (base tree)
  (if (getattr tree is_empty)
      base
      (let l (tree_prod base (getattr tree left))
        (let r (tree_prod base (getattr tree right))
          (* (* l r) (getattr tree value))))))
