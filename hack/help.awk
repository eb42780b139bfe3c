# make help: every `## target: description` comment of the makefiles, the
# description's continuation lines (`## ...`) joined, printed up to the end
# of its first sentence and wrapped to 79 columns.
function flush(   text, n, words, i, line) {
	if (target == "")
		return
	text = desc
	if (match(text, /\.( |$)/))
		text = substr(text, 1, RSTART)
	n = split(text, words, " ")
	line = sprintf("  %-16s", target)
	for (i = 1; i <= n; i++) {
		if (length(line) + length(words[i]) > 78 && line !~ /^ *$/ && length(line) > 18) {
			print line
			line = sprintf("%18s", "")
		}
		line = line (line ~ / $/ ? "" : " ") words[i]
	}
	print line
	target = ""
}
/^## [a-z0-9-]+:/ {
	flush()
	target = substr($2, 1, length($2) - 1)
	desc = substr($0, length($2) + 5)
	next
}
/^## / && target != "" { desc = desc " " substr($0, 4); next }
{ flush() }
END { flush() }
