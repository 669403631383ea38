set terminal pngcairo size 900,500 noenhanced
set output 'b5_ratio.png'
set title "B5: steal ratio (large:small) against the size ratio (make -j4, 2-way)"
set key outside right
set grid
set xlabel 'size ratio large:small'
set ylabel 'steal ratio large:small'
set logscale y
set xrange [0:8]
plot 'b5.dat' index 0 using 1:2 with linespoints title 'fixed (2.6.3; DMA 0 as 1)', '' index 1 using 1:2 with linespoints title 'batching', '' index 2 using 1:2 with linespoints title 'accumulators', 'ideal.dat' using 1:2 with lines dt 2 title 'size ratio'
