# waits.gp -- where each engine's time went in one execution (lncsim report).
#
# usage: gnuplot -c waits.gp DATA.tsv OUT FORMAT TITLE UNIT YMAX
#   DATA.tsv  tab-separated, one header line: the bar's label ("core 0 PE"),
#             then busy, semaphore wait, barrier wait, dependency wait and
#             idle time in UNIT (the five add up to the run time); a row
#             with an empty label and zeros separates the cores
#   UNIT      the time unit (ns, us, ms)
#   YMAX      the top of the y axis in UNIT (the same for every mode of a
#             run, so that their charts compare); * for automatic
fmt = (ARGC >= 3 && ARG3 ne "") ? ARG3 : "png"
unit = (ARGC >= 5) ? ARG5 : "ns"
ymax = (ARGC >= 6) ? ARG6 : "*"
if (fmt eq "svg") {
	set terminal svg size 1000,560 dynamic enhanced font "sans,12" background rgb "white"
} else {
	set terminal pngcairo size 1000,560 enhanced font "sans,11"
}
set output ARG2
set datafile separator "\t"

set title ARG4 noenhanced
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.8
set grid ytics lc rgb "#dddddd"
if (ymax eq "*") {
	set yrange [0:*]
} else {
	set yrange [0:real(ymax)]
}
set ylabel sprintf("simulated time (%s)", unit)
set xtics rotate by -60 scale 0 noenhanced font ",9"
set key outside bottom center horizontal
colors = "#4575b4 #d73027 #fdae61 #984ea3 #dddddd"
plot for [i=2:6] ARG1 using i:xtic(1) title columnheader(i) lc rgb word(colors, i - 1)
