# zsh_complete.zsh — what zsh's completion system offers for command lines, in a real
# interactive zsh (a zpty pseudo-terminal): loads compinit and the completion script
# SCRIPT, then for each LINE types it and TAB, and prints the matches on one line
# (sorted, space-separated). compadd is wrapped so that every match zsh adds is also
# printed between markers; ^U clears the line before the next one. The end markers
# are typed split ('<do''ne>') so that the terminal's echo of the command does not match.
#   zsh -f zsh_complete.zsh SCRIPT LINE...
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='' PROMPT='' RPROMPT=''"
zpty -w z "autoload -U compinit && compinit -u -D && source ${(q)1}"
zpty -w z 'compadd() { local -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "<hit>$h</hit>"; done; builtin compadd "$@"; }'
zpty -w z "print -r -- '<rea''dy>'"
zpty -r z out '*<ready>*'
for line in "${@:2}"; do
  zpty -n -w z "$line"$'\t'
  zpty -n -w z $'\C-u'
  zpty -w z "print -r -- '<do''ne>'"
  zpty -r z out '*<done>*'
  hits=(${(u)${(M)${(f)out}:#*<hit>*}})
  hits=(${(o)${(u)${${hits#*<hit>}%%</hit>*}}})
  print -r -- "${(j: :)hits}"
done
zpty -d z
