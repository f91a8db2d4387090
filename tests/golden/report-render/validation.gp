# prediction error against measurements (validation/)
# Written by zsim report; run from this folder: gnuplot FILE.gp
# draws FILE.png and FILE.svg (through hidden .tmp files).
set encoding utf8
set datafile commentschars "#"
set grid
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key outside right top vertical
set ylabel "error: (predicted - measured) / measured (%)"
set xtics rotate by -25 nomirror
set grid noxtics ytics
set xzeroaxis lt -1
set title "predicted vs measured (targets: memory within 5 %, step time within 10 %)"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 960,480 font "sans,10" noenhanced
} else {
  set terminal png size 960,480 noenhanced
}
set output ".validation.png.tmp"
plot "validation.dat" using 2:xtic(1) lc rgb "#1f77b4" title "peak device allocated", \
     "" using 3 lc rgb "#6baed6" title "peak device reserved", \
     "" using 4 lc rgb "#d62728" title "peak host", \
     "" using 5 lc rgb "#2ca02c" title "step time", \
     5 with lines dt 2 lc rgb "#888888" title "memory target", \
     -5 with lines dt 2 lc rgb "#888888" notitle, \
     10 with lines dt 3 lc rgb "#2ca02c" title "time target", \
     -10 with lines dt 3 lc rgb "#2ca02c" notitle
set output
set terminal svg size 960,480 dynamic font "sans,11" noenhanced background "white"
set output ".validation.svg.tmp"
plot "validation.dat" using 2:xtic(1) lc rgb "#1f77b4" title "peak device allocated", \
     "" using 3 lc rgb "#6baed6" title "peak device reserved", \
     "" using 4 lc rgb "#d62728" title "peak host", \
     "" using 5 lc rgb "#2ca02c" title "step time", \
     5 with lines dt 2 lc rgb "#888888" title "memory target", \
     -5 with lines dt 2 lc rgb "#888888" notitle, \
     10 with lines dt 3 lc rgb "#2ca02c" title "time target", \
     -10 with lines dt 3 lc rgb "#2ca02c" notitle
set output
