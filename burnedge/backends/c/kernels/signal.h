/* Signal kernels: the DFT (dft.c). Complex values are a trailing dimension of 2 (real, imaginary), a real signal
 * one of 1, as ONNX lays them out. */
#ifndef BURNEDGE_SIGNAL_H
#define BURNEDGE_SIGNAL_H

/* DFT along the middle axis of x[outer][len][inner][cin] (cin 1: real, 2: complex) into y[outer][m][inner][cout]:
 * bins k < m of the n-point transform (the signal cut or zero-padded to n), forward (e^{-2 pi i jk/n}) or inverse
 * (e^{+2 pi i jk/n} / n); `irfft`: x holds the n/2+1 bins of a real signal's spectrum (Hermitian symmetry gives
 * the rest) and y the real signal (cout 1). `cs` holds cos and sin of 2 pi t / n for t < n (2n doubles).
 * Sums run in double. */
void be_dft_f32(const float *x, float *y, long outer, long len, long inner, int cin, long n, long m, int inverse,
                int irfft, const double *cs, int threads);

#endif
