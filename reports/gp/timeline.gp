# timeline.gp -- PE activity over time, one lane per core (lncsim report).
#
# usage: gnuplot -c timeline.gp DATA.tsv OUT FORMAT TITLE NCORES UNIT
#   DATA.tsv  tab-separated, one header line: bucket start, bucket end (in
#             UNIT), then one column per core: the fraction (0..1) of the
#             bucket during which the core's PE array ran a Matmult
#   UNIT      the time unit of the first two columns (ns, us, ms)
fmt = (ARGC >= 3 && ARG3 ne "") ? ARG3 : "png"
nc = (ARGC >= 5) ? int(ARG5) : 1
unit = (ARGC >= 6) ? ARG6 : "ns"
if (fmt eq "svg") {
	set terminal svg size 1000,(260 + 50 * nc) dynamic enhanced font "sans,12" background rgb "white"
} else {
	set terminal pngcairo size 1000,(260 + 50 * nc) enhanced font "sans,11"
}
set output ARG2
set datafile separator "\t"

set title ARG4 noenhanced
set xlabel sprintf("simulated time (%s)", unit)
set ylabel "core"
set yrange [-0.2:nc + 0.1]
set ytics ()
do for [c=0:nc-1] {
	set ytics add (sprintf("core %d", c) c + 0.45)
}
set grid xtics lc rgb "#dddddd"
set style fill solid 0.8 noborder
set key outside bottom center horizontal
plot for [c=0:nc-1] ARG1 using (($1 + $2) / 2):(c):1:2:(c):(c + 0.9 * column(c + 3)) \
	with boxxyerror lc rgb "#4575b4" title (c == 0 ? "PE busy fraction per time bucket (lane height = 100%)" : ""), \
	for [c=0:nc-1] c + 0.9 with lines dt 3 lc rgb "#999999" title (c == 0 ? "100% busy" : "")
