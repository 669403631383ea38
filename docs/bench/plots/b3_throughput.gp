set terminal pngcairo size 900,500 noenhanced
set output 'b3_throughput.png'
set title "B3: charge throughput against threads, per variant"
set key outside right
set grid
set xlabel 'threads (2 cores)'
set ylabel 'M faults/s (median)'
set logscale x 2
plot for [i=0:5] 'b3.dat' index i using 1:2 with linespoints title '('.word('a b c d e f', i+1).')'
