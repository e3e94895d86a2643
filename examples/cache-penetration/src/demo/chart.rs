//! A line chart as SVG, written by hand: a plotting library would cost more to build than the
//! rest of the example.

pub struct Series<'a> {
    pub label: &'a str,
    pub color: &'a str,
    /// (x, y), in order of x.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 400.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 50.0;

pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let all_points = || series.iter().flat_map(|line| line.points.iter());
    let x_step = tick_step(all_points().map(|&(x, _)| x).fold(0.0, f64::max));
    let y_step = tick_step(all_points().map(|&(_, y)| y).fold(0.0, f64::max) * 1.05);
    let x_max = axis_end(all_points().map(|&(x, _)| x).fold(0.0, f64::max), x_step);
    let y_max = axis_end(all_points().map(|&(_, y)| y).fold(0.0, f64::max) * 1.05, y_step);
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let to_x = |x: f64| LEFT + x / x_max * plot_width;
    let to_y = |y: f64| TOP + plot_height - y / y_max * plot_height;

    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{}" y="24" text-anchor="middle" font-size="15">{}</text>
"#,
        WIDTH / 2.0,
        escape(title)
    );
    for tick in ticks(x_max, x_step) {
        let x = to_x(tick);
        svg += &format!(
            "<line x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#e5e5e5\"/>\n\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            TOP + plot_height,
            TOP + plot_height + 18.0,
            number(tick)
        );
    }
    for tick in ticks(y_max, y_step) {
        let y = to_y(tick);
        svg += &format!(
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#e5e5e5\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            LEFT + plot_width,
            LEFT - 8.0,
            y + 4.0,
            number(tick)
        );
    }
    svg += &format!(
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_width}\" height=\"{plot_height}\" fill=\"none\" stroke=\"#888\"/>\n\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n\
         <text transform=\"translate(18 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
        LEFT + plot_width / 2.0,
        HEIGHT - 12.0,
        escape(x_label),
        TOP + plot_height / 2.0,
        escape(y_label)
    );
    // The legend runs along the top, above the plot, where no line can hide it.
    let legend_y = TOP - 12.0;
    let mut legend_x = LEFT;
    for line in series {
        let points: Vec<String> =
            line.points.iter().map(|&(x, y)| format!("{:.1},{:.1}", to_x(x), to_y(y))).collect();
        svg += &format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>\n\
             <line x1=\"{legend_x:.1}\" y1=\"{legend_y:.1}\" x2=\"{:.1}\" y2=\"{legend_y:.1}\" stroke=\"{color}\" stroke-width=\"2\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            points.join(" "),
            legend_x + 24.0,
            legend_x + 30.0,
            legend_y + 4.0,
            escape(line.label),
            color = line.color,
        );
        legend_x += 50.0 + 7.0 * line.label.chars().count() as f64;
    }
    svg + "</svg>\n"
}

/// 1, 2 or 5 times a power of ten, giving four to ten ticks up to `max`.
fn tick_step(max: f64) -> f64 {
    if max <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf((max / 5.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * power)
        .find(|step| max / step <= 10.0)
        .unwrap_or(10.0 * power)
}

/// The tick at or above `max`, or just below it: samples taken a moment after the end of a run
/// do not earn the axis a tick of its own.
fn axis_end(max: f64, step: f64) -> f64 {
    ((max / step - 0.02).ceil() * step).max(step)
}

fn ticks(max: f64, step: f64) -> impl Iterator<Item = f64> {
    (0..).map(move |index| index as f64 * step).take_while(move |tick| *tick <= max + step / 1e6)
}

fn number(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(tick_step(20.0), 2.0);
        assert_eq!(tick_step(2300.0), 500.0);
        assert_eq!(
            ticks(axis_end(2300.0, 500.0), 500.0).collect::<Vec<_>>(),
            [0.0, 500.0, 1000.0, 1500.0, 2000.0, 2500.0]
        );
    }
}
