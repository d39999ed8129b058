# util.gp -- per-core PE and MAC utilization of one run (lncsim report).
#
# usage: gnuplot -c util.gp DATA.tsv OUT FORMAT TITLE NMODES
#   DATA.tsv  tab-separated, one header line: core, then NMODES columns of
#             PE utilization (%), then NMODES columns of MAC utilization (%),
#             one per execution mode (reference, linked or single)
#   FORMAT    png or svg
fmt = (ARGC >= 3 && ARG3 ne "") ? ARG3 : "png"
nm = (ARGC >= 5) ? int(ARG5) : 1
if (fmt eq "svg") {
	set terminal svg size 1000,480 dynamic enhanced font "sans,12" background rgb "white"
} else {
	set terminal pngcairo size 1000,480 enhanced font "sans,11"
}
set output ARG2
set datafile separator "\t"
set datafile missing "?"

set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics lc rgb "#dddddd"
# the y axis follows the data (low utilization stays readable), with room
# above the bars for the legend
set yrange [0:*]
set offsets 0, 0, graph 0.2, 0
set xlabel "core"
set ylabel "utilization (%)"
set key top center horizontal
set linetype 1 lc rgb "#4575b4"
set linetype 2 lc rgb "#f46d43"
set linetype 3 lc rgb "#66bd63"

set multiplot layout 1,2 title ARG4 noenhanced
set title "PE array busy time / makespan"
plot for [i=2:1+nm] ARG1 using i:xtic(1) title columnhead(i)
set title "MACs / (128x128 x PE cycles of makespan)"
plot for [i=2+nm:1+2*nm] ARG1 using i:xtic(1) title columnhead(i)
unset multiplot
