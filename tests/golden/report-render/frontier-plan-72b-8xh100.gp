# plan frontier for 'plan-72b-8xh100' (run 4)
# Written by zsim report; run from this folder: gnuplot FILE.gp
# draws FILE.png and FILE.svg (through hidden .tmp files).
set encoding utf8
set datafile commentschars "#"
set grid
set key bottom right
set ylabel "tokens/s per GPU"
set yrange [0:*]
set xrange [0:*]
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1100,460 font "sans,10" noenhanced
} else {
  set terminal png size 1100,460 noenhanced
}
set output ".frontier-plan-72b-8xh100.png.tmp"
set multiplot layout 1,2 title "plan-72b-8xh100" . ": throughput against memory (plan)"
set xlabel "peak GPU allocated per rank (GiB)"
plot "frontier-plan-72b-8xh100.dat" index 0 using 1:3 with points pt 7 ps 1.2 lc rgb "#7f7f7f" title "feasible", \
     "" index 1 using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "frontier", \
     "" index 3 using 1:3 with points pt 6 ps 3 lw 2 lc rgb "#d62728" title "best"
set xlabel "peak host memory per node (GiB)"
plot "frontier-plan-72b-8xh100.dat" index 0 using 2:3 with points pt 7 ps 1.2 lc rgb "#7f7f7f" title "feasible", \
     "" index 2 using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "frontier", \
     "" index 3 using 2:3 with points pt 6 ps 3 lw 2 lc rgb "#d62728" title "best"
unset multiplot
set output
set terminal svg size 1100,460 dynamic font "sans,11" noenhanced background "white"
set output ".frontier-plan-72b-8xh100.svg.tmp"
set multiplot layout 1,2 title "plan-72b-8xh100" . ": throughput against memory (plan)"
set xlabel "peak GPU allocated per rank (GiB)"
plot "frontier-plan-72b-8xh100.dat" index 0 using 1:3 with points pt 7 ps 1.2 lc rgb "#7f7f7f" title "feasible", \
     "" index 1 using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "frontier", \
     "" index 3 using 1:3 with points pt 6 ps 3 lw 2 lc rgb "#d62728" title "best"
set xlabel "peak host memory per node (GiB)"
plot "frontier-plan-72b-8xh100.dat" index 0 using 2:3 with points pt 7 ps 1.2 lc rgb "#7f7f7f" title "feasible", \
     "" index 2 using 1:2 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "frontier", \
     "" index 3 using 2:3 with points pt 6 ps 3 lw 2 lc rgb "#d62728" title "best"
unset multiplot
set output
