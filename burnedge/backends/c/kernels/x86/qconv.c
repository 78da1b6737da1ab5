/* int8 convolution: im2col + int8 GEMM (any group, stride, dilation, padding); the depthwise kernel is
 * qconv_dw.c.
 *
 * GEMM path, per image and group, Y(Mg x OH*OW) = Wg(Mg x Cg*KH*KW) * cols(Cg*KH*KW x OH*OW):
 *  1. weights were packed at lowering time as int16-pair A panels, the zero-point term folded into the bias;
 *  2. output positions are cut into 16-wide column panels, a few per job; a job writes each panel's im2col rows
 *     (raw int8, padding = x_zp) into a plain K x 16 buffer, or reads the input rows directly for unit-stride
 *     unpadded 1x1 convs, then interleaves row pairs into the B-panel layout (qgemm.h);
 *  3. each 6-row weight panel meets each column panel in the micro-kernel, requantised in registers.
 * ARM: the same steps with NEON (zip interleaves, the vmlal tile, the exact NEON rule); with
 * dotprod the column panels are int8 quads and each 6-row weight panel is made into quads once per job
 * (`be_qa_quads`) for the sdot tile.
 */
#include "qconv.h"
#include "x86_qgemm.h"
#include "qconv_im2col.h"

#ifdef BE_X86_VNNI
/* VNNI: the column panels are quads of unsigned bytes (activations + 128), the weight panel int8 quads with the
 * corrections -128 * sum(w[r]) after them (the slice's 64 spare bytes), x86_qgemm.h. */
#define PANEL_BYTES(K) be_qconv_pstride(K)

/* rows 4kq .. 4kq+3 of a K x 16 block (row k at rows + k*ld) as a quad panel: dst[kq*64 + 4c + j] = row(4kq+j)[c]
 * + 128 (byte unpacks, then 16-bit unpacks); rows past K are not read (0 there meets the weights' zero padding) */
static void interleave(const int8_t *rows, long ld, long K, int8_t *dst) {
    const __m128i flip = _mm_set1_epi8((char)0x80), z = _mm_setzero_si128();
    for (long kq = 0; kq < (K + 3) / 4; kq++) {
        __m128i v[4];
        for (int j = 0; j < 4; j++)
            v[j] = 4 * kq + j < K ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows + (4 * kq + j) * ld)), flip)
                                  : z;
        const __m128i t0 = _mm_unpacklo_epi8(v[0], v[1]), t1 = _mm_unpackhi_epi8(v[0], v[1]);
        const __m128i t2 = _mm_unpacklo_epi8(v[2], v[3]), t3 = _mm_unpackhi_epi8(v[2], v[3]);
        int8_t *d = dst + kq * 64;
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(t0, t2));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(t0, t2));
        _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(t1, t3));
        _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(t1, t3));
    }
}

/* the int16-pair weight panel as int8 quads (quad kq of row r: pairs 2kq and 2kq+1; an odd last pair alone) and the
 * rows' corrections */
static inline __attribute__((always_inline)) void weight_panel(const int16_t *wp, long k2, int8_t *aq) {
    const long kq = (k2 + 1) / 2;
    uint32_t sum[BE_QMR] = {0};
    for (long q = 0; q < kq; q++)
        for (int r = 0; r < BE_QMR; r++)
            for (int j = 0; j < 4; j++) {
                const long kp = 2 * q + j / 2;
                const int8_t w = kp < k2 ? (int8_t)wp[(kp * BE_QMR + r) * 2 + (j & 1)] : 0;
                aq[(q * BE_QMR + r) * 4 + j] = w;
                sum[r] += (uint32_t)(int32_t)w;
            }
    int32_t corr[BE_QMR];
    for (int r = 0; r < BE_QMR; r++) corr[r] = (int32_t)(0u - 128u * sum[r]);
    memcpy(aq + kq * BE_QMR * 4, corr, sizeof corr);
}

static inline __attribute__((always_inline)) void panel_tile(long k2, const int16_t *wp, const int8_t *aq,
                                                            const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    (void)wp;
    const long kq = (k2 + 1) / 2;
    int32_t corr[BE_QMR];
    memcpy(corr, aq + kq * BE_QMR * 4, sizeof corr);
    be_qvnni_tile_quads(kq, (const int32_t *)aq, corr, (const uint8_t *)b, mr, nr, y, ldy, e, i0, j0);
}
#else
/* rows (2kp, 2kp+1) of a K x 16 block (row k at rows + k*ld) interleaved into a B panel */
#define PANEL_BYTES(K) (((K) + 1) / 2 * 32)
static void interleave(const int8_t *rows, long ld, long K, int8_t *dst) {
    const long k2 = (K + 1) / 2;
    for (long kp = 0; kp < k2; kp++) {
        const int8_t *r0 = rows + 2 * kp * ld;
        int8_t *d = dst + kp * 32;
        const __m128i v0 = _mm_loadu_si128((const __m128i *)r0);
        const __m128i v1 = 2 * kp + 1 < K ? _mm_loadu_si128((const __m128i *)(r0 + ld)) : _mm_setzero_si128();
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi8(v0, v1));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi8(v0, v1));
    }
}

static inline __attribute__((always_inline)) void weight_panel(const int16_t *wp, long k2, int8_t *aq) {
    (void)wp, (void)k2, (void)aq; /* the tile reads the int16-pair panel itself */
}

static inline __attribute__((always_inline)) void panel_tile(long k2, const int16_t *wp, const int8_t *aq,
                                                            const int8_t *b, int mr, int nr, int8_t *y, long ldy,
                                                            const be_qepi *e, long i0, long j0) {
    (void)aq;
    be_qgemm_tile(k2, wp, b, mr, nr, y, ldy, e, i0, j0);
}

#endif

#include "qconv_loops.h"
