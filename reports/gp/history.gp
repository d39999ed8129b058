# history.gp -- runs over time: status, simulated time, utilization.
#
# usage: gnuplot -c history.gp DATA.tsv OUT FORMAT TITLE UNIT XMIN XMAX
#   DATA.tsv  tab-separated, one header line: run id, status (pass, fail,
#             error), simulated time (UNIT, longest execution of the run),
#             mean PE utilization (%), mean MAC utilization (%); NaN where a
#             run has no execution
#   XMIN XMAX the run id range
fmt = (ARGC >= 3 && ARG3 ne "") ? ARG3 : "png"
unit = (ARGC >= 5) ? ARG5 : "us"
if (fmt eq "svg") {
	set terminal svg size 1000,640 dynamic enhanced font "sans,12" background rgb "white"
} else {
	set terminal pngcairo size 1000,640 enhanced font "sans,11"
}
set output ARG2
set datafile separator "\t"
if (ARGC >= 7) {
	set xrange [real(ARG6) - 0.5:real(ARG7) + 0.5]
	if (real(ARG7) - real(ARG6) <= 20) {
		set xtics 1
	}
}
set format x "%.0f"
set grid lc rgb "#dddddd"
set key outside right top vertical
set lmargin 12
set rmargin 16

set multiplot layout 2,1 title ARG4 noenhanced
set title "simulated time per run (errors without an execution at 0)"
set ylabel sprintf("simulated time (%s)", unit)
set xlabel ""
set yrange [0:*]
plot ARG1 using 1:(strcol(2) eq "pass" ? $3 : NaN) with points pt 7 ps 1.3 lc rgb "#1a9850" title "pass", \
	'' using 1:(strcol(2) eq "fail" ? $3 : NaN) with points pt 9 ps 1.5 lc rgb "#d73027" title "fail", \
	'' using 1:(strcol(2) eq "error" ? (valid(3) ? $3 : 0) : NaN) with points pt 13 ps 1.5 lc rgb "#404040" title "error"
set title "mean utilization per run"
set ylabel "utilization (%)"
set xlabel "run id"
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
plot ARG1 using 1:4 with linespoints pt 7 lc rgb "#4575b4" title "PE util", \
	'' using 1:5 with linespoints pt 5 lc rgb "#f46d43" title "MAC util"
unset multiplot
