//! TFLOPS against M, one line per (N, K) and implementation, as an SVG file.

use std::path::Path;

use plotters::prelude::*;

use super::{BenchReport, Implementation};
use crate::error::{Error, Result};

fn plot_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::io(format!("drawing {}", path.display()), std::io::Error::other(e.to_string()))
}

/// One line of the plot: label, colour index, implementation, (M, TFLOPS).
type Series = (String, usize, Implementation, Vec<(f64, f64)>);

/// Writes the plot to `path` (log-scale M axis; one colour per line, marker shape per
/// implementation: circle tuned, triangle kernel default, cross vendor, hollow square the
/// bf16 vendor GEMM of the dequantized inputs). Shapes with a
/// single M still get a point.
pub fn plot_svg(r: &BenchReport, path: &Path) -> Result<()> {
    let mut series: Vec<Series> = Vec::new();
    for s in &r.shapes {
        for m in &s.measurements {
            let name = format!("N={} K={} {}", s.n, s.k, m.implementation.label());
            match series.iter_mut().find(|x| x.0 == name) {
                Some(x) => x.3.push((s.m as f64, m.tflops)),
                None => {
                    let color = series.len();
                    series.push((name, color, m.implementation, vec![(s.m as f64, m.tflops)]));
                }
            }
        }
    }
    if series.is_empty() {
        return Err(Error::invalid("bench", "nothing measured, nothing to plot"));
    }
    for s in &mut series {
        s.3.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let max_m = r.shapes.iter().map(|s| s.m).max().unwrap_or(1) as f64;
    let max_tflops = series.iter().flat_map(|s| s.3.iter().map(|p| p.1)).fold(0.0f64, f64::max);
    let y_top = if max_tflops > 0.0 { max_tflops * 1.1 } else { 1.0 };

    let root = SVGBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("block FP8 GEMM on {} ({}): TFLOPS vs M", r.device, r.backend), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((0.8f64..max_m * 1.25).log_scale(), 0.0..y_top)
        .map_err(|e| plot_err(path, e))?;
    chart.configure_mesh().x_desc("M (batch size)").y_desc("TFLOPS").draw().map_err(|e| plot_err(path, e))?;
    for (name, color_idx, which, points) in &series {
        let color = Palette99::pick(*color_idx).to_rgba();
        let style = ShapeStyle { color, filled: true, stroke_width: 2 };
        let line = chart.draw_series(LineSeries::new(points.iter().copied(), style)).map_err(|e| plot_err(path, e))?;
        line.label(name.clone()).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
        let pts = points.iter().copied();
        let drawn = match which {
            Implementation::Tuned => chart.draw_series(pts.map(|p| Circle::new(p, 4, style))),
            Implementation::KernelDefault => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 5, style))),
            Implementation::Vendor => chart.draw_series(pts.map(|p| Cross::new(p, 4, style))),
            Implementation::Bf16Vendor => {
                let hollow = ShapeStyle { filled: false, ..style };
                chart.draw_series(pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], hollow)))
            }
        };
        drawn.map_err(|e| plot_err(path, e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}
