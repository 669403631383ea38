set terminal pngcairo size 900,500 noenhanced
set output 'b1_j32.png'
set title "B1: N=32 completion ratio and direct-scan share per configuration"
set key outside right
set grid
set style data histograms
set style fill solid 0.6
set boxwidth 0.4
set xtics rotate by -30
set ylabel 'completion / nowmark'
set y2label 'direct scan %'
set y2tics
set yrange [0:*]
set y2range [0:105]
plot 'b1.dat' using ($1-0.2):3:(0.4):xtic(2) with boxes title 'completion ratio', '' using ($1+0.2):4:(0.4) axes x1y2 with boxes title 'direct scan share %'
