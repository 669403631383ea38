set terminal pngcairo size 900,500 noenhanced
set output 'b4_scanned.png'
set title "B4: pages scanned per variant"
set key outside right
set grid
set style fill solid 0.6
set logscale y
set ylabel 'pages scanned'
set xrange [-0.5:3.5]
plot 'b4.dat' using ($1-0.2):3:(0.4):xtic(2) with boxes title 'direct', '' using ($1+0.2):($4 > 0 ? $4 : 1):(0.4) with boxes title 'background'
