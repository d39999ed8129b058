# timeline.gp -- PE activity over time, one lane per core and execution
# mode, the modes of a core side by side (lncsim report).
#
# usage: gnuplot -c timeline.gp DATA.tsv OUT FORMAT TITLE NLANES UNIT MODES
#   DATA.tsv  tab-separated, one header line: bucket start, bucket end (in
#             UNIT), then one column per lane (core-major: every mode of
#             core 0, then of core 1, ...): the fraction (0..1) of the
#             bucket during which the core's PE array ran a Matmult in that
#             mode
#   UNIT      the time unit of the first two columns (ns, us, ms)
#   MODES     the modes, space separated ("reference linked")
fmt = (ARGC >= 3 && ARG3 ne "") ? ARG3 : "png"
nl = (ARGC >= 5) ? int(ARG5) : 1
unit = (ARGC >= 6) ? ARG6 : "ns"
modes = (ARGC >= 7) ? ARG7 : "single"
nm = words(modes)
# a lane's base: lanes of one core together, a gap between cores
y(l) = l + 0.6 * int(l / nm)
ytop = y(nl - 1) + 1.1
if (fmt eq "svg") {
	set terminal svg size 1000,(260 + 45 * nl) dynamic enhanced font "sans,12" background rgb "white"
} else {
	set terminal pngcairo size 1000,(260 + 45 * nl) enhanced font "sans,11"
}
set output ARG2
set datafile separator "\t"

set title ARG4 noenhanced
set xlabel sprintf("simulated time (%s)", unit)
set ylabel "core, mode"
set yrange [-0.2:ytop]
set ytics () noenhanced
do for [l=0:nl-1] {
	set ytics add (sprintf("core %d %s", int(l / nm), word(modes, l % nm + 1)) y(l) + 0.45)
}
set grid xtics lc rgb "#dddddd"
set style fill solid 0.8 noborder
set key outside bottom center horizontal
colors = "#4575b4 #d73027 #1a9850"
plot for [l=0:nl-1] ARG1 using (($1 + $2) / 2):(y(l)):1:2:(y(l)):(y(l) + 0.9 * column(l + 3)) \
	with boxxyerror lc rgb word(colors, l % nm + 1) title (l < nm ? sprintf("PE busy fraction, %s (lane height = 100%%)", word(modes, l + 1)) : ""), \
	for [l=0:nl-1] y(l) + 0.9 with lines dt 3 lc rgb "#999999" title (l == 0 ? "100% busy" : "")
