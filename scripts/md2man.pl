#!/usr/bin/perl
# md2man.pl - doc/heapwalk.md as a man(7) page, for scripts/gen-ref.sh.
#
# The reference is written once, in Markdown; heapwalk.1 is made from it
# so that the two cannot say different things.  Only the Markdown the
# reference uses is understood, and anything else is an error rather
# than a page that renders wrong: "# title" (dropped: the head names the
# page), the synopsis block right under it (dropped: the head has its
# own SYNOPSIS), "## Section" (.SH, upper case), "### command usage"
# (.SS), paragraphs, "- " bullets and "N. " steps with their indented
# continuation lines, two-column tables (a .TP entry per row, the header
# row dropped), ``` blocks (.nf), and inline `code` (bold, with the
# placeholders of the command table italic), **bold** and [text](link)
# (the text).
#
# usage: md2man.pl HEAD.roff PLACEHOLDERS < heapwalk.md > heapwalk.1
# HEAD.roff: the page's own lines up to its DESCRIPTION (comments, .TH,
# NAME, SYNOPSIS), copied as they are.  PLACEHOLDERS: the upper-case
# words that stand for a value (PID FILE ADDR ...), space-separated.
use strict;
use warnings;
use open qw(:std :encoding(UTF-8));

my ($head_file, $words) = @ARGV;
die "usage: md2man.pl HEAD.roff PLACEHOLDERS\n" unless defined $words;
my %placeholder = map { $_ => 1 } split ' ', $words;

open my $hf, '<', $head_file or die "md2man: $head_file: $!\n";
print while <$hf>;
close $hf;

my @out;
my $need_para = 0;      # the next text starts a new paragraph
my $line_no = 0;

sub fail { die "md2man: line $line_no: $_[0]\n" }

# roff-escape plain text: the backslash, and "-" where it means a minus
# (an option's dashes; a dash of prose, " -- ", is an em dash).
sub plain {
	my ($t) = @_;
	$t =~ s/\\/\\e/g;
	$t =~ s/ -- / \\(em /g;
	$t =~ s/(^|[\s(\[\/"=|,])(--?[a-zA-Z][a-zA-Z0-9_-]*)/$1 . dashes($2)/ge;
	# Another page: gdb(1), heapwalk-gdb(7).
	$t =~ s/(?<![\w\\-])([a-z][a-z0-9_.]*(?:-[a-z0-9_.]+)*)\(([1-8])\)/"\\fB" . dashes($1) . "\\fP($2)"/ge;
	return glyphs($t);
}

# The characters beyond ASCII the reference uses, as roff names them (a
# page is read by groff without preconv).
my %glyph = ("\x{2026}" => '.\\|.\\|.', "\x{2248}" => '\\(~~', "\x{2190}" => '\\(<-',
	     "\x{2192}" => '\\(->', "\x{2014}" => '\\(em', "\x{2013}" => '\\(en',
	     "\x{00d7}" => '\\(mu', "\x{2265}" => '\\(>=', "\x{2264}" => '\\(<=');
sub glyphs {
	my ($t) = @_;
	$t =~ s/([^\x00-\x7f])/$glyph{$1} \/\/ fail(sprintf "U+%04X has no roff name in md2man.pl", ord $1)/ge;
	return $t;
}

sub dashes { (my $t = $_[0]) =~ s/-/\\-/g; return $t }

# A code span: bold, every dash a minus, placeholders italic.
sub code {
	my ($t) = @_;
	$t =~ s/\\/\\e/g;
	$t =~ s/-/\\-/g;
	$t = glyphs($t);
	# JSON in a span may break after a comma.
	$t =~ s/,(?=\S)/,\\:/g;
	$t =~ s{(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]*)(?![A-Za-z0-9_])}
	       {$placeholder{$1} ? "\\fI$1\\fB" : $1}ge;
	return "\\fB$t\\fP";
}

# One line of Markdown text as roff: code spans, bold, links.
sub inline {
	my ($t) = @_;
	my $r = '';
	while (length $t) {
		if ($t =~ s/^`([^`]*)`//) {
			$r .= code($1);
		} elsif ($t =~ s/^\*\*([^*]+)\*\*//) {
			$r .= "\\fB" . inline($1) . "\\fP";
		} elsif ($t =~ s/^\[([^\]]+)\]\([^)\s]+\)//) {
			$r .= inline($1);
		} elsif ($t =~ s/^([^`*\[]+|[*\[])//) {
			$r .= plain($1);
		} else {
			fail "an unclosed code span: $t";
		}
	}
	return $r;
}

# A line of output text: roff takes a leading "." or "'" as a request.
sub text {
	for my $t (split /\n/, $_[0]) {
		$t =~ s/^\s+//;
		$t = "\\&$t" if $t =~ /^['.]/;
		push @out, $t;
	}
}

sub para {
	push @out, '.PP' if $need_para;
	$need_para = 0;
}

# A heading's words, quoted when there are several: a command's usage
# with its placeholders italic, or a section's name.
sub heading {
	my ($t, $usage) = @_;
	$t = plain($t);
	$t =~ s{(?<![A-Za-z0-9_\\])([A-Z][A-Z0-9_]*)(?![A-Za-z0-9_])}
	       {$placeholder{$1} ? "\\fI$1\\fP" : $1}ge if $usage;
	return $t =~ / / ? "\"$t\"" : $t;
}

my @md = <STDIN>;
chomp @md;
my $section = '';       # '' before the first "##": the DESCRIPTION
my $i = 0;
push @out, '.SH DESCRIPTION';
while ($i < @md) {
	$line_no = $i + 1;
	my $l = $md[$i];
	if ($l =~ /^# /) {
		$i++;
	} elsif ($l =~ /^```/) {
		my @block;
		for ($i++; $i < @md && $md[$i] !~ /^```/; $i++) {
			push @block, $md[$i];
		}
		fail 'a ``` block that does not end' if $i >= @md;
		$i++;
		# The synopsis under the title is the head's.
		next if $section eq '' && !grep { $_ ne '.SH DESCRIPTION' } @out;
		push @out, '.PP', '.RS 4', '.nf';
		for my $b (@block) {
			(my $e = $b) =~ s/\\/\\e/g;
			$e =~ s/-/\\-/g;
			$e = glyphs($e);
			$e = "\\&$e" if $e =~ /^['.]/;
			push @out, $e;
		}
		push @out, '.fi', '.RE';
		$need_para = 1;
	} elsif ($l =~ /^## (.*)$/) {
		($section = $1) =~ s/`//g;
		push @out, '.SH ' . heading(uc $section, 0);
		$need_para = 0;
		$i++;
	} elsif ($l =~ /^### (.*)$/) {
		push @out, '.SS ' . heading($1, 1);
		$need_para = 0;
		$i++;
	} elsif ($l =~ /^#/) {
		fail "a heading md2man does not know: $l";
	} elsif ($l =~ /^\s*$/) {
		$need_para = 1 if @out && $out[-1] !~ /^\.S[HS]/;
		$i++;
	} elsif ($l =~ /^\|/) {
		# A table: its header row and rule, then a .TP entry per row.
		fail 'a table without its header rule' unless ($md[$i + 1] // '') =~ /^\|[-|: ]+\|$/;
		push @out, '.PP' if $need_para || $out[-1] !~ /^\.S[HS]/;
		for ($i += 2; $i < @md && $md[$i] =~ /^\|/; $i++) {
			$line_no = $i + 1;
			my $row = $md[$i];
			$row =~ s/^\|\s*//;
			$row =~ s/\s*\|\s*$//;
			my @cells = split /\s*(?<!\\)\|\s*/, $row;
			fail 'a table row of ' . @cells . ' cells, not 2' unless @cells == 2;
			s/\\\|/|/g for @cells;
			push @out, '.TP';
			text(inline($cells[0]));
			text(inline($cells[1]));
		}
		$need_para = 1;
	} elsif ($l =~ /^(- |(\d+)\. )(.*)$/) {
		my ($tag, $indent) = defined $2 ? ("$2.", 4) : ('\(bu', 2);
		my $cont = length $1;
		push @out, ".IP $tag $indent";
		my $item = $3;
		for ($i++; $i < @md && $md[$i] =~ /^ {$cont}\S/; $i++) {
			$item .= "\n" . substr($md[$i], $cont);
		}
		text(inline($item));
		$need_para = 1;
	} elsif ($l =~ /^ /) {
		fail "an indented line outside a list: $l";
	} else {
		# A paragraph: its lines at once (a code span may go on over a
		# line's end).
		my $p = $l;
		for ($i++; $i < @md && $md[$i] !~ /^(?:\s|$|#|\||```|- |\d+\. )/; $i++) {
			$p .= "\n$md[$i]";
		}
		para();
		# Long JSON spans have no spaces to stretch: such a paragraph
		# is set ragged-right rather than justified around them.
		my $ragged = $p =~ /`[^`\s]{40,}/;
		push @out, '.ad l' if $ragged;
		text(inline($p));
		push @out, '.ad' if $ragged;
	}
}

# Blank lines between list items or before a table must not leave a
# ".PP" right before an ".IP" (mandoc warns of a paragraph macro that
# does nothing).
my @final;
for my $k (0 .. $#out) {
	next if $out[$k] eq '.PP' && $k < $#out && $out[$k + 1] =~ /^\.(?:IP|SH|SS|TP|PP)\b/;
	push @final, $out[$k];
}
print "$_\n" for @final;
