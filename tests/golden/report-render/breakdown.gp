# steady step time breakdown, latest run of each scenario
# Written by zsim report; run from this folder: gnuplot FILE.gp
# draws FILE.png and FILE.svg (through hidden .tmp files).
set encoding utf8
set datafile commentschars "#"
set grid
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set key outside right top vertical
set ylabel "steady step time (s)"
set yrange [0:*]
set xtics rotate by -25 nomirror
set grid noxtics ytics
set title "where the steady step's time goes"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 960,400 font "sans,10" noenhanced
} else {
  set terminal png size 960,400 noenhanced
}
set output ".breakdown.png.tmp"
plot "breakdown.dat" using 2:xtic(1) lc rgb "#1f77b4" title "compute", \
     "" using 3 lc rgb "#ff7f0e" title "exposed collective", \
     "" using 4 lc rgb "#d62728" title "exposed PCIe", \
     "" using 5 lc rgb "#2ca02c" title "optimizer", \
     "" using 6 lc rgb "#9467bd" title "other"
set output
set terminal svg size 960,400 dynamic font "sans,11" noenhanced background "white"
set output ".breakdown.svg.tmp"
plot "breakdown.dat" using 2:xtic(1) lc rgb "#1f77b4" title "compute", \
     "" using 3 lc rgb "#ff7f0e" title "exposed collective", \
     "" using 4 lc rgb "#d62728" title "exposed PCIe", \
     "" using 5 lc rgb "#2ca02c" title "optimizer", \
     "" using 6 lc rgb "#9467bd" title "other"
set output
