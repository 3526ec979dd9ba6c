;;; stagd_eglot.el — the Emacs configuration of docs/editors.md, used as a user would:
;;; emacs.test.ts extracts it from the doc (loaded first with -l), puts the daemon on
;;; PATH as `stagd', and loads this file in `emacs --batch', which opens a Python file
;;; in a git project, starts eglot (M-x eglot picks the configured server), runs
;;; `stagd-show-converted-code' and `stagd-show-graph' (workspace/executeCommand) and a
;;; graph that cannot stage, whose error must come back as an error and as a Flymake
;;; diagnostic on the failing line. Prints one line per step; exits non-zero on failure.

(defun stagd-test-out (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n")))

(defun stagd-test-wait (pred seconds)
  "Runs the event loop until PRED is true or SECONDS pass; PRED's last value."
  (let ((deadline (+ (float-time) seconds)) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    value))

(condition-case err
    (let* ((dir (file-name-as-directory (getenv "STAGD_TEST_DIR")))
           (file (expand-file-name "lenses.py" dir)))
      (with-temp-file file
        (insert "def f(x):\n    y = x * 2\n    return y + 1\n\ndef boom(x):\n    return len(x, 3)\n"))
      (find-file file)
      (stagd-test-out "mode %s" major-mode)
      (call-interactively #'eglot)
      (stagd-test-out "server %s" (and (stagd-test-wait #'eglot-current-server 15) t))
      (goto-char (point-min))
      (forward-line 2)
      (with-current-buffer (stagd-show-converted-code)
        (stagd-test-out "converted %s %s" major-mode (and (string-match-p "def f(x):" (buffer-string)) t)))
      (with-current-buffer (stagd-show-graph)
        (stagd-test-out "graph %s" (and (string-match-p "graph @f(" (buffer-string)) t)))
      (goto-char (point-min))
      (forward-line 5)
      (condition-case e
          (progn (stagd-show-graph) (stagd-test-out "error none"))
        (error (stagd-test-out "error %s" (and (string-match-p "staging boom failed" (format "%S" e)) t))))
      ;; eglot hands diagnostics to Flymake, which asks for them on its idle timer:
      ;; batch Emacs is never idle, so ask here
      (let ((found (stagd-test-wait
                    (lambda ()
                      (flymake-start)
                      (seq-find (lambda (d) (string-match-p "staging boom failed" (flymake-diagnostic-text d)))
                                (flymake-diagnostics)))
                    15)))
        (stagd-test-out "flymake %s line %s" (and found t)
                        (and found (line-number-at-pos (flymake-diagnostic-beg found)))))
      (eglot-shutdown (eglot-current-server))
      (stagd-test-out "OK"))
  (error
   (stagd-test-out "FAIL %S" err)
   (kill-emacs 1)))
