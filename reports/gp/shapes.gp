# shapes.gp -- PE array fill by matmul shape across the database.
#
# usage: gnuplot -c shapes.gp DATA.tsv OUT FORMAT TITLE
#   DATA.tsv  tab-separated, one header line: shape label ("KxM (count)"),
#             mean array fill (%) = K*M / 128^2, share of all recorded PE
#             matmul time (%)
fmt = (ARGC >= 3 && ARG3 ne "") ? ARG3 : "png"
if (fmt eq "svg") {
	set terminal svg size 1000,520 dynamic enhanced font "sans,12" background rgb "white"
} else {
	set terminal pngcairo size 1000,520 enhanced font "sans,11"
}
set output ARG2
set datafile separator "\t"

set title ARG4 noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics lc rgb "#dddddd"
set yrange [0:119]
set ytics 0,20,100
set xlabel "matmul shape K x M (number of Matmults)"
set ylabel "percent (%)"
set xtics rotate by -35 noenhanced
set key top right
set linetype 1 lc rgb "#4575b4"
set linetype 2 lc rgb "#fdae61"
plot ARG1 using 2:xtic(1) title columnhead(2), \
	'' using 3 title columnhead(3)
