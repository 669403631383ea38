set terminal pngcairo size 900,500 noenhanced
set output 'b2_move.png'
set title "B2: move time against size, per case and variant"
set key outside right
set grid
set xlabel 'task size (MiB)'
set ylabel 'ms'
plot for [i=0:2] 'b2.dat' index i using 1:2 with linespoints title word('root-00 00-01 00-01-swap', i+1).' batched', for [i=0:2] 'b2.dat' index i using 1:3 with linespoints dt 2 title word('root-00 00-01 00-01-swap', i+1).' naive'
