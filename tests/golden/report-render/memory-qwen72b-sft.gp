# memory over time for 'qwen72b-sft' (run 1)
# Written by zsim report; run from this folder: gnuplot FILE.gp
# draws FILE.png and FILE.svg (through hidden .tmp files).
set encoding utf8
set datafile commentschars "#"
set grid
set key below horizontal
set xlabel "time (s)"
set ylabel "GPU memory per rank (GiB)"
set yrange [0:*]
set y2label "host memory per node (GiB)"
set ytics nomirror
set y2tics
set y2range [0:*]
set title "qwen72b-sft" . ": memory over time"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 960,480 font "sans,10" noenhanced
} else {
  set terminal png size 960,480 noenhanced
}
set output ".memory-qwen72b-sft.png.tmp"
plot "memory-qwen72b-sft.dat" index 0 using 1:2 with steps lw 2 lc rgb "#1f77b4" title "GPU allocated", \
     "" index 0 using 1:3 with steps lw 2 dt 2 lc rgb "#6baed6" title "GPU reserved", \
     "memory-qwen72b-sft.dat" index 1 using 1:2 axes x1y2 with steps lw 2 lc rgb "#d62728" title "host per node"
set output
set terminal svg size 960,480 dynamic font "sans,11" noenhanced background "white"
set output ".memory-qwen72b-sft.svg.tmp"
plot "memory-qwen72b-sft.dat" index 0 using 1:2 with steps lw 2 lc rgb "#1f77b4" title "GPU allocated", \
     "" index 0 using 1:3 with steps lw 2 dt 2 lc rgb "#6baed6" title "GPU reserved", \
     "memory-qwen72b-sft.dat" index 1 using 1:2 axes x1y2 with steps lw 2 lc rgb "#d62728" title "host per node"
set output
