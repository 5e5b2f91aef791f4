/* plot.c — the heat map of skel report --plot as a PNG: libpng writes the
 * image, FreeType draws the text (DejaVu Sans Mono, Debian's
 * fonts-dejavu-core; $SKEL_FONT names another).
 *
 * Input, written by the replayer (replay/report.c):
 *   skel-heat 1
 *   axis seconds|accesses X0 X1
 *   grid COLUMNS ROWS
 *   band ROW0 NROWS LO HI ACCESSES NAME      (one per object, busiest first)
 *   ROWS lines of COLUMNS access counts      (row 0 at the top)
 * Layout: a title, the grid (each cell CELL_W x CELL_H pixels, a grey line
 * between objects), the axis' ends under it, and at the right of each
 * band the object's name, address range and accesses; a colour scale
 * at the bottom.  Colour: log(1 + accesses) against the largest cell. */
#include "driver/run.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELL_W 3
#define CELL_H 2
#define MARGIN 12
#define TITLE_H 34
#define AXIS_H 44
#define LEGEND_W 420
#define FONT_PX 12
#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

typedef struct pband {
	int row0, nrows;
	unsigned long long lo, hi, accesses;
	char name[256];
} pband;

typedef struct heat {
	char unit[16];
	double x0, x1;
	int cols, rows;
	pband *bands;
	int nbands;
	double *cells;
} heat;

typedef struct canvas {
	unsigned w, h;
	uint8_t *px;		/* RGB rows */
	FT_Library ft;
	FT_Face face;
} canvas;

static int fail(char err[256], const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, 256, fmt, ap);
	va_end(ap);
	return -1;
}

static int heat_read(const char *path, heat *h, char err[256])
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fail(err, "%s: %s", path, strerror(errno));
	char line[512];
	int ver = 0, rc = -1;
	memset(h, 0, sizeof *h);
	if (!fgets(line, sizeof line, f) || sscanf(line, "skel-heat %d", &ver) != 1 || ver != 1 ||
	    fscanf(f, " axis %15s %lf %lf grid %d %d ", h->unit, &h->x0, &h->x1, &h->cols,
		   &h->rows) != 5 || h->cols <= 0 || h->rows < 0 || h->cols > 4096 || h->rows > 4096) {
		fail(err, "%s: not heat map data from this skel", path);
		goto out;
	}
	h->bands = calloc((size_t)h->rows + 1, sizeof *h->bands);
	h->cells = calloc((size_t)h->rows * (size_t)h->cols + 1, sizeof *h->cells);
	if (!h->bands || !h->cells) {
		fail(err, "out of memory");
		goto out;
	}
	while (h->nbands < h->rows) {
		pband *b = &h->bands[h->nbands];
		long pos = ftell(f);
		if (fscanf(f, " band %d %d %llx %llx %llu %255[^\n]", &b->row0, &b->nrows, &b->lo,
			   &b->hi, &b->accesses, b->name) != 6) {
			fseek(f, pos, SEEK_SET);
			break;
		}
		if (b->row0 < 0 || b->nrows <= 0 || b->row0 + b->nrows > h->rows) {
			fail(err, "%s: a band outside the grid", path);
			goto out;
		}
		h->nbands++;
	}
	for (long i = 0; i < (long)h->rows * h->cols; i++)
		if (fscanf(f, "%lf", &h->cells[i]) != 1) {
			fail(err, "%s: the grid is cut short", path);
			goto out;
		}
	rc = 0;
out:
	fclose(f);
	return rc;
}

static void heat_free(heat *h)
{
	free(h->bands);
	free(h->cells);
}

/* ------------------------------------------------------------ drawing */

static void put_px(canvas *c, int x, int y, const uint8_t rgb[3], double alpha)
{
	if (x < 0 || y < 0 || (unsigned)x >= c->w || (unsigned)y >= c->h)
		return;
	uint8_t *p = c->px + ((size_t)y * c->w + (size_t)x) * 3;
	for (int k = 0; k < 3; k++)
		p[k] = (uint8_t)(p[k] + (rgb[k] - p[k]) * alpha + 0.5);
}

static void fill(canvas *c, int x, int y, int w, int h, const uint8_t rgb[3])
{
	for (int j = y; j < y + h; j++)
		for (int i = x; i < x + w; i++)
			put_px(c, i, j, rgb, 1.0);
}

/* text with its baseline at y */
static void text(canvas *c, int x, int y, const uint8_t rgb[3], const char *s)
{
	for (; *s; s++) {
		if (FT_Load_Char(c->face, (unsigned char)*s, FT_LOAD_RENDER))
			continue;
		FT_GlyphSlot g = c->face->glyph;
		for (unsigned j = 0; j < g->bitmap.rows; j++)
			for (unsigned i = 0; i < g->bitmap.width; i++) {
				unsigned char a = g->bitmap.buffer[j * (unsigned)g->bitmap.pitch + i];
				if (a)
					put_px(c, x + g->bitmap_left + (int)i, y - g->bitmap_top + (int)j,
					       rgb, a / 255.0);
			}
		x += (int)(g->advance.x >> 6);
	}
}

/* t in [0, 1] to a colour: dark blue, purple, red, orange, pale yellow */
static void colour(double t, uint8_t rgb[3])
{
	static const uint8_t stops[5][3] = {
		{ 20, 24, 82 }, { 120, 28, 109 }, { 212, 48, 60 }, { 249, 140, 10 }, { 252, 250, 180 },
	};
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	double f = t * 4;
	int k = f >= 4 ? 3 : (int)f;
	f -= k;
	for (int i = 0; i < 3; i++)
		rgb[i] = (uint8_t)(stops[k][i] + (stops[k + 1][i] - stops[k][i]) * f + 0.5);
}

static const uint8_t ink[3] = { 230, 230, 230 }, grey[3] = { 110, 110, 120 },
		     ground[3] = { 8, 8, 12 };

static void draw_grid(canvas *c, const heat *h)
{
	double max = 0;
	for (long i = 0; i < (long)h->rows * h->cols; i++)
		max = h->cells[i] > max ? h->cells[i] : max;
	double lmax = log1p(max > 0 ? max : 1);
	for (int y = 0; y < h->rows; y++)
		for (int x = 0; x < h->cols; x++) {
			double v = h->cells[(long)y * h->cols + x];
			uint8_t rgb[3];
			if (v <= 0)
				continue;
			colour(log1p(v) / lmax, rgb);
			fill(c, MARGIN + x * CELL_W, TITLE_H + y * CELL_H, CELL_W, CELL_H, rgb);
		}
	for (int k = 1; k < h->nbands; k++)
		fill(c, MARGIN, TITLE_H + h->bands[k].row0 * CELL_H, h->cols * CELL_W, 1, grey);
}

static void draw_text(canvas *c, const heat *h)
{
	char s[512];
	int gw = h->cols * CELL_W, gh = h->rows * CELL_H, lx = MARGIN + gw + 10;
	bool secs = !strcmp(h->unit, "seconds");
	text(c, MARGIN, 22, ink, "skel report: accesses by address (each band one object, low "
	     "addresses below) over time");
	snprintf(s, sizeof s, secs ? "%.6f s" : "%.0f", secs ? 0.0 : h->x0);
	text(c, MARGIN, TITLE_H + gh + 16, ink, s);
	snprintf(s, sizeof s, secs ? "%.6f s" : "%.0f accesses", secs ? h->x1 - h->x0 : h->x1);
	text(c, MARGIN + gw - (int)strlen(s) * 7, TITLE_H + gh + 16, ink, s);
	text(c, MARGIN + gw / 2 - 80, TITLE_H + gh + 16, grey, secs ?
	     "time (interpolated) ->" : "access index ->");
	for (int k = 0; k < h->nbands; k++) {
		const pband *b = &h->bands[k];
		int y = TITLE_H + (b->row0 + b->nrows / 2) * CELL_H;
		text(c, lx, y - 2, ink, b->name);
		snprintf(s, sizeof s, "0x%llx-0x%llx, %llu accesses", b->lo, b->hi, b->accesses);
		text(c, lx, y + 12, grey, s);
	}
	/* the colour scale */
	int sy = TITLE_H + gh + 26;
	for (int i = 0; i < 200; i++) {
		uint8_t rgb[3];
		colour(i / 199.0, rgb);
		fill(c, lx + i, sy, 1, 10, rgb);
	}
	text(c, lx + 206, sy + 10, ink, "accesses per cell (log)");
}

static int write_png(const canvas *c, const char *path, char err[256])
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return fail(err, "%s", strerror(errno));
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (!info || setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		fclose(f);
		return fail(err, "libpng could not write the image");
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, c->w, c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (unsigned y = 0; y < c->h; y++)
		png_write_row(png, c->px + (size_t)y * c->w * 3);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	if (fclose(f) != 0)
		return fail(err, "write error");
	return 0;
}

int plot_heat(const char *data, const char *png, unsigned *width, unsigned *height,
	      char err[256])
{
	heat h;
	if (heat_read(data, &h, err) < 0) {
		heat_free(&h);
		return -1;
	}
	canvas c = { 0 };
	c.w = (unsigned)(MARGIN + h.cols * CELL_W + LEGEND_W);
	c.h = (unsigned)(TITLE_H + h.rows * CELL_H + AXIS_H);
	const char *font = getenv("SKEL_FONT");
	int rc = -1;
	c.px = malloc((size_t)c.w * c.h * 3);
	if (!c.px) {
		fail(err, "out of memory");
	} else if (FT_Init_FreeType(&c.ft)) {
		fail(err, "FreeType would not start");
	} else if (FT_New_Face(c.ft, font && *font ? font : DEFAULT_FONT, 0, &c.face) ||
		   FT_Set_Pixel_Sizes(c.face, 0, FONT_PX)) {
		fail(err, "cannot load the font %s (Debian: fonts-dejavu-core; SKEL_FONT names "
		     "another)", font && *font ? font : DEFAULT_FONT);
	} else {
		for (size_t i = 0; i < (size_t)c.w * c.h; i++)
			memcpy(c.px + 3 * i, ground, 3);
		draw_grid(&c, &h);
		draw_text(&c, &h);
		rc = write_png(&c, png, err);
	}
	if (c.face)
		FT_Done_Face(c.face);
	if (c.ft)
		FT_Done_FreeType(c.ft);
	free(c.px);
	heat_free(&h);
	*width = c.w;
	*height = c.h;
	return rc;
}
