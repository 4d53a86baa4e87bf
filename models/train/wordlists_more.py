"""Second edition of the word lists (written in the third session): more terms for
every open list. wordlists.split_all splits each edition on its own, so the first
edition's held-out words stay held out and these add train and held-out words in
the same 75/25 proportion. No entry repeats one of the first edition.
"""


def _words(block):
    """One entry per line; blank lines and surrounding spaces ignored."""
    return [w.strip() for w in block.strip().splitlines() if w.strip()]


FIRST_NAMES_MORE = _words("""
Oliver
Harriet
Eleanor
Theodore
Beatrice
Winston
Clarence
Gwendolyn
Mildred
Harold
Lillian
Cecil
Vivian
Marjorie
Eugene
Gertrude
Wilfred
Rosalind
Imogen
Rupert
Penelope
Reginald
Josephine
Nathaniel
Lorraine
Dwayne
Tamika
LaToya
Jamal
DeShawn
Keisha
Marcus
Darnell
Tyrone
Brianna
Kayla
Courtney
Lindsey
Travis
Dustin
Wyatt
Colton
Hadley
Everett
Aubrey
Evelyn
Mabel
Edith
Doris
Clifford
Leonard
Stanley
Wendell
Lucille
Geraldine
Bernadette
Phyllis
Arthur
Percy
Archibald
Harvey
Mortimer
Ophelia
Quentin
Rosalie
Gladys
Irene
Marlene
Maureen
Kendra
Shanice
Jermaine
Desmond
Terrence
Lamar
Latisha
Demetrius
Jalen
Kiara
Alejandro
Ximena
Fernando
Guillermo
Rodrigo
Marisol
Catalina
Esteban
Ignacio
Paloma
Remedios
Encarnación
Nicolás
Andrés
Jesús
Ramón
Agustín
Dolores
Mercedes
Araceli
Yolanda
Rocío
Nuria
Itziar
Ainhoa
Maite
Concepción
Adrián
Héctor
Rubén
Óscar
Julián
Fabián
Cristóbal
Efraín
Lourdes
Soledad
Amparo
Montserrat
João
Gonçalo
Inês
Conceição
Sebastião
Leonor
Thiago
Caio
Luíza
Vitória
Rafaela
Joaquim
Estêvão
Fábio
Flávia
Márcio
Cláudia
Antônio
Vinícius
Letícia
Étienne
Benoît
Céline
Sébastien
Thérèse
Amélie
Mathéo
Clémence
Aurélien
Geneviève
Jérôme
Océane
Rémi
Frédéric
Honoré
Josée
Ghislaine
Mélanie
Jacques
Yves
Marcel
Brigitte
Delphine
Solène
Timothée
Margaux
Jannik
Friedrich
Wolfgang
Günther
Uwe
Dieter
Hannelore
Ursula
Gisela
Sabine
Jörg
Käthe
Mathilde
Lieselotte
Henrike
Heinz
Klaus
Bärbel
Ingeborg
Annegret
Maximilian
Leonie
Alessandro
Lorenzo
Federico
Giuseppe
Salvatore
Vincenzo
Carmela
Rosalba
Gianluca
Niccolò
Ludovica
Alessia
Elisabetta
Raffaele
Concetta
Assunta
Pietro
Donatella
Gaetano
Ilaria
Krzysztof
Grzegorz
Agnieszka
Katarzyna
Jędrzej
Bożena
Dorota
Stanisław
Mirosław
Jadwiga
Bartłomiej
Przemysław
Żaneta
Halina
Ewa
Ryszard
Zbigniew
Magdalena
Jaroslav
Zdeněk
Kateřina
Lenka
Vojtěch
Ondřej
Bohumil
Květa
Miroslava
Gábor
Zsófia
Levente
Erzsébet
Ildikó
Tamás
Katalin
Csaba
Gergely
Réka
Bence
Enikő
Attila
Zsuzsanna
Mehmet
Ayşe
Emre
Elif
Mustafa
Zeynep
Hülya
Burak
Gökhan
Ece
İlknur
Serkan
Tuğba
Ömer
Büşra
Derya
Khalid
Noura
Tariq
Samira
Abdullah
Rania
Karim
Yasmin
Hamza
Ibrahim
Amira
Bilal
Faisal
Huda
Mahmoud
Salma
Waleed
Youssef
Mounir
Nadia
Jamila
Dariush
Shirin
Farhad
Parisa
Reza
Mehdi
Golnar
Niloufar
Babak
Kourosh
Roya
Laleh
Arash
Soraya
Navid
Azadeh
Leila
Aarav
Ishaan
Lakshmi
Meenakshi
Venkatesh
Anjali
Pooja
Nikhil
Siddharth
Aditi
Rohan
Neha
Gaurav
Shreya
Harpreet
Gurpreet
Manpreet
Balwinder
Karthik
Divya
Suresh
Ramesh
Padma
Srinivas
Aishwarya
Vijay
Kiran
Nandini
Prakash
Asif
Imran
Saima
Nadeem
Shazia
Zubair
Sana
Ayesha
Hina
Waqar
Fahad
Mehwish
Rabia
Rafiq
Tasnim
Sharmin
Mahbub
Nusrat
Arif
Farzana
Shakil
Anwar
Tanvir
Moushumi
Xiaoming
Jiahui
Zhiwei
Yuxuan
Haoran
Meiling
Jianguo
Lihua
Xinyi
Zihan
Shufen
Weiming
Qiang
Ji-hoon
Seo-jun
Ha-eun
Do-yoon
Ye-jin
Eun-ji
Hyun-woo
Min-seo
Jae-won
Seung-min
Soo-jin
Dong-hyun
Yeon-woo
Takeshi
Haruka
Sota
Yui
Akira
Emiko
Hinata
Daisuke
Naoko
Yoshiko
Kazuki
Mitsuko
Ryota
Aoi
Shota
Megumi
Tomoko
Huong
Minh
Tuan
Phuong
Trang
Khanh
Ngoc
Thuy
Hieu
Nhung
Quynh
Huy
Maricel
Jomar
Rosalinda
Analyn
Marilou
Rodel
Ligaya
Bayani
Dalisay
Rogelio
Imelda
Marites
Arnel
Rowena
Adebayo
Folasade
Temitope
Babatunde
Funmilayo
Ayodele
Olumide
Yetunde
Kehinde
Taiwo
Bukola
Damilola
Tolulope
Chukwuemeka
Nkechi
Obinna
Chiamaka
Ifeanyi
Uchenna
Chidinma
Ikechukwu
Amarachi
Nnamdi
Ebere
Abubakar
Hauwa
Aminu
Sadiq
Maryam
Usman
Halima
Kwabena
Akosua
Adwoa
Kwaku
Afua
Kwesi
Esi
Kojo
Efua
Akua
Kobina
Wanjiku
Njeri
Kiprono
Chebet
Achieng
Nyambura
Wairimu
Akinyi
Muthoni
Cherono
Baraka
Zawadi
Neema
Dawit
Tigist
Meron
Selam
Yohannes
Mulugeta
Hiwot
Alemayehu
Mekdes
Bereket
Rahel
Tsion
Abdirahman
Hodan
Ayaan
Farhiya
Abdiweli
Hamdi
Ilhan
Nimco
Ubah
Faadumo
Sahra
Abdikarim
Aleksei
Yekaterina
Anastasia
Vladimir
Tatiana
Nikolai
Mikhail
Lyudmila
Galina
Boris
Yelena
Pyotr
Irina
Gennady
Vasily
Ksenia
Artyom
Oleksandr
Bohdan
Taras
Mykola
Yaroslava
Oksana
Olena
Vasyl
Dmytro
Yuliia
Andriy
Solomiia
Dimitrios
Konstantinos
Georgios
Vasiliki
Panagiotis
Despina
Athanasios
Christos
Evangelia
Stavros
Kalliopi
Spyridon
Fotini
Sven
Håkan
Åsa
Solveig
Eirik
Ragnhild
Torbjørn
Kjersti
Pekka
Aino
Jukka
Sanna
Eino
Mikko
Gunnar
Jørgen
Birgitta
Henrik
Linnea
Ásgeir
Guðrún
Ólafur
Hildur
Ciarán
Róisín
Pádraig
Caoimhe
Tadhg
Cathal
Gráinne
Fionnuala
Ruairí
Clodagh
Éamon
Sinéad
Diarmuid
Máire
Aisling
Bríd
Declan
Wiremu
Rangi
Tama
Anahera
Nikau
Manaia
Kahu
Hine
Rawiri
Whetu
Hōhepa
Mereana
Winona
Kateri
Tallulah
Sequoyah
Chenoa
Aiyana
Nizhoni
Kiona
Takoda
Kohana
Kalani
Noelani
Kainoa
""")


LAST_NAMES_MORE = _words("""
Fitzpatrick
Gallagher
Donnelly
Kavanagh
Brennan
Sullivan
McCarthy
Byrne
Doyle
Nolan
Whelan
Hennessy
Callahan
O'Sullivan
O'Neill
O'Donnell
O'Reilly
O'Malley
MacKenzie
McLeod
McGregor
McIntyre
Henderson
Sutherland
Ferguson
Armstrong
Crawford
Pemberton
Whitfield
Ashby
Blackwood
Thornton
Hargreaves
Worthington
Holloway
Pritchard
Llewellyn
Vaughan
Griffiths
Davies
Jenkins
Stevenson
Harrington
Donovan
Hawkins
Jennings
Whitaker
Schofield
Ridley
Barnett
Caldwell
Dalton
Hutchinson
Ellison
Prescott
Sinclair
Lockhart
Galloway
Abernathy
Radcliffe
Carrington
Atherton
Pennington
Rutherford
Underwood
Wainwright
Pettigrew
Featherstone
Smith-Jones
Bowes-Lyon
Baden-Powell
Parker-Bowles
Jones-Davies
Goldstein
Rosenberg
Katz
Shapiro
Weinstein
Horowitz
Feldman
Kaplan
Ben-David
Mizrahi
Peretz
van der Merwe
van den Broek
van Leeuwen
de Jong
ter Haar
Du Plessis
Le Roux
De la Cruz
De los Santos
Del Rosario
De León
Dela Peña
Da Silva
Dos Santos
D'Angelo
Dell'Acqua
Di Stefano
De Luca
Lo Bianco
St. Clair
von Richthofen
Al-Hassan
Al-Farsi
Al-Rashid
El-Sayed
Al-Masri
Ó Súilleabháin
Ní Mhurchú
Castillo
Morales
Vargas
Herrera
Medina
Aguilar
Delgado
Vásquez
Castro
Ortega
Guzmán
Mendoza
Ruiz
Rojas
Soto
Contreras
Salazar
Cabrera
Espinoza
Navarro
Domínguez
Cortés
Sandoval
Villanueva
Cervantes
Zamora
Beltrán
Echeverría
Goikoetxea
Ibarra
Urrutia
Velázquez
Márquez
Benítez
Carrasco
Ribeiro
Ferreira
Gonçalves
Rodrigues
Fernandes
Marques
Teixeira
Moreira
Barbosa
Cardoso
Azevedo
Magalhães
Nascimento
Araújo
Monteiro
Correia
Cavalcanti
Fontaine
Lambert
Chevalier
Lefebvre
Marchand
Duval
Mercier
Gauthier
Perrin
Tremblay
Gagnon
Pelletier
Thibodeaux
Boudreaux
Arsenault
Desjardins
Lemieux
Bérubé
Thériault
Poirier
Beaulieu
Létourneau
Ménard
Dufresne
Schmidt
Schneider
Fischer
Weber
Wagner
Becker
Hoffmann
Schulz
Zimmermann
Krüger
Hartmann
Schäfer
Neumann
Böhm
Lehmann
Wolff
Baumann
Kühn
Fuchs
Pfeiffer
Brandt
Dietrich
Eckert
Marino
Greco
Bruno
Conti
Mancini
Giordano
Rizzo
Lombardi
Moretti
Barbieri
Santoro
Rinaldi
Caruso
Ferrara
Martinelli
Vitale
Coppola
De Santis
Marchetti
Pellegrini
Palumbo
Sorrentino
Woźniak
Kozłowski
Jankowski
Mazur
Kwiatkowski
Krawczyk
Piotrowski
Grabowski
Pawłowski
Michalski
Adamczyk
Zając
Wieczorek
Jabłoński
Król
Stępień
Szymański
Dąbrowski
Novotný
Černý
Veselý
Horák
Pokorný
Pospíšil
Jelínek
Růžička
Beneš
Sedláček
Doležal
Krejčí
Nagy
Molnár
Németh
Farkas
Balogh
Takács
Juhász
Mészáros
Szilágyi
Fehér
Balázs
Szűcs
Aydın
Arslan
Doğan
Kılıç
Özdemir
Şimşek
Erdoğan
Yıldız
Yıldırım
Korkmaz
Saleh
Hamdan
Jaber
Nassar
Suleiman
Darwish
Khoury
Abboud
Najjar
Barakat
Mahfouz
Hosseini
Mohammadi
Rahimi
Karimi
Ahmadi
Jafari
Tehrani
Ghorbani
Sadeghi
Rostami
Shirazi
Kazemi
Hashemi
Agarwal
Mehta
Joshi
Desai
Chopra
Malhotra
Kapoor
Pillai
Menon
Subramanian
Krishnan
Mukherjee
Ghosh
Saxena
Trivedi
Sandhu
Dhillon
Bhattacharya
Kulkarni
Deshpande
Shetty
Srivastava
Qureshi
Malik
Siddiqui
Abbasi
Akhtar
Mirza
Bhatti
Rizvi
Chowdhury
Hossain
Uddin
Talukder
Bhuiyan
Majumder
Zheng
Liang
Xie
Deng
Xiao
Jiang
Wong
Leung
Cheung
Kwok
Tsang
Yoon
Kwon
Hwang
Baek
Ahn
Sato
Ito
Kato
Yoshida
Yamada
Sasaki
Matsumoto
Inoue
Hayashi
Shimizu
Hashimoto
Ishikawa
Fujita
Murakami
Sakamoto
Võ
Đặng
Bùi
Huỳnh
Trương
Ngô
Reyes
Bautista
Aquino
Macapagal
Dimaculangan
Panganiban
Tolentino
Gatchalian
Evangelista
Adekunle
Ogunleye
Afolabi
Balogun
Oladipo
Akinola
Nwosu
Okeke
Nwankwo
Anyanwu
Nwachukwu
Danjuma
Abdullahi
Yakubu
Asante
Appiah
Agyeman
Acheampong
Frimpong
Quartey
Mwangi
Ochieng
Kiprotich
Njoroge
Kariuki
Odhiambo
Tesfaye
Bekele
Tadesse
Gebremariam
Mekonnen
Getachew
Warsame
Hirsi
Samatar
Sokolov
Popov
Lebedev
Novikov
Morozov
Vasiliev
Zaitsev
Shevchenko
Kovalenko
Bondarenko
Tkachenko
Melnyk
Kovalchuk
Nikolaidis
Karagiannis
Christodoulou
Stavropoulos
Papageorgiou
Eriksson
Karlsson
Nilsson
Gustafsson
Rasmussen
Lindgren
Nyström
Halvorsen
Heikkinen
Hämäläinen
Ólafsson
Waititi
Te Kanawa
Tamihana
Tsosie
Benally
Harjo
Mankiller
Standing Bear
Red Cloud
Kahananui
""")


CITIES_MORE = _words("""
Grand Rapids
Ann Arbor
Kalamazoo
Ypsilanti
Saginaw
Duluth
Rochester
Syracuse
Schenectady
Poughkeepsie
Ithaca
Binghamton
Scranton
Allentown
Wilkes-Barre
Akron
Youngstown
Fort Wayne
South Bend
Evansville
Peoria
Rockford
Champaign
Cedar Rapids
Sioux Falls
Fargo
Rapid City
Billings
Missoula
Bozeman
Laramie
Provo
Ogden
Salt Lake City
Reno
Las Vegas
Scottsdale
Tempe
Yuma
Santa Rosa
Modesto
Stockton
Visalia
Oxnard
Pasadena
Long Beach
Anaheim
Escondido
Chula Vista
San Luis Obispo
Redding
Tacoma
Bellingham
Yakima
Walla Walla
Kennewick
Pocatello
Idaho Falls
Lubbock
Amarillo
Abilene
Waco
Killeen
McAllen
Galveston
Shreveport
Lake Charles
Biloxi
Gulfport
Hattiesburg
Tuscaloosa
Huntsville
Pensacola
Gainesville
Jacksonville
Fort Lauderdale
Boca Raton
St. Petersburg
Sarasota
Fort Myers
Key West
Savannah
Macon
Chattanooga
Knoxville
Memphis
Murfreesboro
Bowling Green
Paducah
Asheville
Winston-Salem
Greensboro
Wilmington
Fayetteville
Myrtle Beach
Roanoke
Virginia Beach
Fredericksburg
Morgantown
Hagerstown
Jersey City
Hoboken
Atlantic City
Stamford
New Haven
Waterbury
Bridgeport
Worcester
Pittsfield
Fall River
New Bedford
Nashua
Bangor
Brattleboro
Woonsocket
Pawtucket
Kenosha
Green Bay
Eau Claire
La Crosse
Oshkosh
Sheboygan
Dubuque
Council Bluffs
Joplin
Kansas City
St. Louis
Stillwater
Broken Arrow
Fort Smith
Jonesboro
Las Cruces
Roswell
Durango
Fort Collins
Colorado Springs
Grand Junction
Fairbanks
Ketchikan
Hilo
Kahului
Cheektowaga
Yonkers
St. Catharines
Saint-Laurent
Mississauga
Brampton
Kitchener
Guelph
Sudbury
Thunder Bay
Sault Ste. Marie
Oshawa
Sherbrooke
Gatineau
Longueuil
Lévis
Saguenay
Rimouski
Moncton
Fredericton
Charlottetown
St. John's
Regina
Red Deer
Lethbridge
Kelowna
Kamloops
Nanaimo
Burnaby
Yellowknife
Iqaluit
Sheffield
Bradford
Nottingham
Leicester
Coventry
Southampton
Norwich
Ipswich
Exeter
Gloucester
Cheltenham
Sunderland
Newcastle upon Tyne
Middlesbrough
Stoke-on-Trent
Wolverhampton
Aberdeen
Dundee
Inverness
Swansea
Wrexham
Lisburn
Bournemouth
Milton Keynes
Huddersfield
Shrewsbury
Waterford
Kilkenny
Sligo
Drogheda
Dundalk
Athlone
Tralee
Killarney
Letterkenny
Dún Laoghaire
Wexford
Melbourne
Brisbane
Hobart
Canberra
Geelong
Wollongong
Toowoomba
Townsville
Ballarat
Bendigo
Wagga Wagga
Launceston
Alice Springs
Fremantle
Christchurch
Tauranga
Dunedin
Palmerston North
Whangārei
Invercargill
Queenstown
Gisborne
Whanganui
New Plymouth
Bengaluru
Hyderabad
Kolkata
Ahmedabad
Jaipur
Lucknow
Kanpur
Nagpur
Bhopal
Vadodara
Ludhiana
Varanasi
Amritsar
Thiruvananthapuram
Coimbatore
Madurai
Mysuru
Visakhapatnam
Guwahati
Chandigarh
Bhubaneswar
Abuja
Ibadan
Port Harcourt
Benin City
Abeokuta
Onitsha
Owerri
Ilorin
Maiduguri
Calabar
Zaria
Guadalajara
Monterrey
Tijuana
Ciudad Juárez
Querétaro
San Luis Potosí
Aguascalientes
Hermosillo
Culiacán
Morelia
Toluca
Cancún
Mazatlán
Acapulco
Ensenada
Marseille
Toulouse
Bordeaux
Strasbourg
Montpellier
Saint-Étienne
Aix-en-Provence
Hamburg
Frankfurt am Main
Stuttgart
Leipzig
Nürnberg
Hannover
Innsbruck
Salzburg
Lausanne
Bologna
Palermo
Verona
Sevilla
Zaragoza
Bilbao
San Sebastián
Valladolid
Salamanca
Lisboa
Coimbra
Rotterdam
Utrecht
Eindhoven
Groningen
's-Hertogenbosch
Antwerpen
Liège
Wrocław
Szczecin
Białystok
Katowice
Olomouc
České Budějovice
Debrecen
Szeged
Pécs
Győr
Košice
Ljubljana
Thessaloniki
Heraklion
Trondheim
Stavanger
Uppsala
Linköping
Örebro
Odense
Aalborg
Tampere
Jyväskylä
Akureyri
""")


STREET_NAMES_MORE = _words("""
Cherry Blossom
Martin Luther King Jr
Old Mill
Tremont
Juniper Ridge
Beacon
Commonwealth
Peachtree
Ponce de Leon
Wilshire
Sepulveda
La Cienega
Figueroa
Sunnyside
Willowbrook
Fox Run
Deer Creek
Bluebell
Honeysuckle
Wisteria
Sweetbriar
Azalea
Gardenia
Hemlock
Spruce
Tamarack
Linden
Alder
Buckeye
Sassafras
Persimmon
Pecan
Palmetto
Mesquite
Saguaro
Ocotillo
Manzanita
Arroyo Seco
Vista del Mar
Paseo del Norte
Camino del Sol
Saint-Denis
Edgewater
Cobblestone
Fieldstone
Flintlock
Wagon Wheel
Stagecoach
Old Post
Ridgecrest
Crestview
Woodland
Brookside
Bayberry
Cranberry
Blueberry
Elderberry
Mockingbird
Bluebird
Oriole
Whippoorwill
Meadowlark
Kingfisher
Pheasant Run
Quail Hollow
Turkey Creek
Bear Creek
Wolf Creek
Eagle Ridge
Timberline
Pinehurst
Ponderosa
Sequoia
Redbud
Locust
Ironwood
Cottonwood
Boxwood
Wildwood
Kenwood
Elmwood
Maplewood
Oakmont
Harvard
Yale
Princeton
Dartmouth
Amherst
Stanford
Berkeley
Cornell
Sherman
Sheridan
Lafayette
Pulaski
Kosciuszko
Steuben
Pershing
Eisenhower
Truman
Coolidge
Garfield
McKinley
Van Ness
Lombard
Geary
Divisadero
Haight
Boylston
Newbury
Marlborough
Dorchester
Wabash
Halsted
Clybourn
Lake Shore
Tchoupitoulas
Nicollet
Hennepin
Euclid
Woodward
Gratiot
Twin Oaks
Old Orchard
Saw Mill
Mill Pond
Millbrook
Rock Creek
Sugar Maple
Silver Birch
Biscayne
Brickell
Flagler
Seminole
Cherokee
Shawnee
Iroquois
Mohawk
Seneca
Onondaga
Algonquin
Cross Creek
Tanglewood
Sherwood
Canterbury
Kensington
Devonshire
Buckingham
Carriage Hill
Hunters Glen
Foxcroft
Applewood
Dogwood Trace
Laurel Oak
Sandpiper
Driftwood
Sea Breeze
Tidewater
Lighthouse
""")


HOSPITAL_HEADS_MORE = _words("""
Saint Vincent
Mount Carmel
Riverbend
Cedar Valley
Mount Sinai
Saint Francis
Saint Anthony's
St. Elizabeth's
Saint Jude
Our Lady of Lourdes
Holy Family
Holy Name
Good Shepherd
Divine Savior
Beth Israel
Queen of Angels
Saint Agnes
Saint Catherine's
St. Bernard's
Saint Clare's
St. Rita's
Saint Peter's
St. Michael's
Saint Raphael's
Saint Barnabas
Saint Alphonsus
St. Dominic's
Saint Thomas
Saint Patrick's
Sisters of Charity
Little Company of Mary
Lenox Hill
Mount Auburn
Cedar Crest
Pine Ridge
Maple Grove
Willow Creek
Sunrise
Desert Springs
Palomar
Mission Hills
Twin Cities
Tri-County
Tri-City
Northwestern
Southeastern
Mid-Valley
Upstate
Three Rivers
Five Rivers
Blue Ridge
Piedmont
Gulf Coast
Glenwood
Brookhaven
Hillside
Greenbrier
Shady Grove
Northridge
Southridge
Westbrook
Cape Fear
Rocky Mountain
Big Sky
Golden Valley
Silver Cross
Hudson Valley
Mohawk Valley
Allegheny
Susquehanna
Catawba
Sierra Vista
Alta Bates
El Camino
Wellspring
Crystal Lake
Prairie View
Bay Harbor
Lakewood Ranch
Spring Valley
""")


STATES_MORE = _words("""
British Columbia
Saskatchewan
New Brunswick
Newfoundland and Labrador
Prince Edward Island
Yukon
Northwest Territories
Nunavut
QC
SK
MB
NL
YT
NU
District of Columbia
Puerto Rico
Guam
American Samoa
US Virgin Islands
Northern Mariana Islands
New South Wales
Victoria
Queensland
South Australia
Western Australia
Tasmania
Northern Territory
Australian Capital Territory
NSW
VIC
QLD
TAS
England
Scotland
Wales
Northern Ireland
Yorkshire
Lancashire
Kent
Essex
Devon
Cornwall
Cumbria
Norfolk
Suffolk
Surrey
Sussex
Hampshire
Somerset
Dorset
Cheshire
Derbyshire
Lincolnshire
Oxfordshire
Northumberland
Merseyside
Greater Manchester
West Midlands
County Kerry
County Clare
County Mayo
County Donegal
County Wicklow
County Tipperary
Bayern
Baden-Württemberg
Nordrhein-Westfalen
Niedersachsen
Hessen
Thüringen
Maharashtra
Tamil Nadu
Kerala
Karnataka
Uttar Pradesh
West Bengal
Punjab
Gujarat
Rajasthan
Telangana
Jalisco
Nuevo León
Yucatán
Oaxaca
Baja California
Sonora
Michoacán
Chiapas
Quintana Roo
Anambra
Oyo
Ogun
Borno
Ekiti
Osun
""")


CONDITIONS_MORE = _words("""
NSTEMI
STEMI
CAD
HTN
HLD
AFib
A-fib
CHF exacerbation
HFrEF
HFpEF
diastolic heart failure
hypertensive urgency
hypertensive emergency
hypertrophic cardiomyopathy
dilated cardiomyopathy
ischemic cardiomyopathy
takotsubo cardiomyopathy
demand ischemia
ventricular tachycardia
ventricular fibrillation
supraventricular tachycardia
SVT
sinus bradycardia
sinus tachycardia
complete heart block
second-degree AV block
first-degree AV block
left bundle branch block
right bundle branch block
Wolff-Parkinson-White syndrome
long QT syndrome
sick sinus syndrome
mitral stenosis
aortic regurgitation
tricuspid regurgitation
mitral valve prolapse
abdominal aortic aneurysm
AAA
thoracic aortic aneurysm
aortic dissection
pericardial effusion
cardiac tamponade
myocarditis
rheumatic heart disease
orthostatic hypotension
hypotension
cardiogenic shock
peripheral vascular disease
critical limb ischemia
intermittent claudication
Raynaud phenomenon
varicose veins
chronic venous insufficiency
superficial thrombophlebitis
DVT
ARDS
acute respiratory failure
hypoxemic respiratory failure
hypercapnic respiratory failure
COPD exacerbation
asthma exacerbation
status asthmaticus
aspiration pneumonia
hospital-acquired pneumonia
ventilator-associated pneumonia
interstitial lung disease
idiopathic pulmonary fibrosis
pulmonary hypertension
cor pulmonale
emphysema
empyema
pulmonary nodule
atelectasis
pertussis
bronchiolitis
croup
cystic fibrosis
pleurisy
obesity hypoventilation syndrome
hemothorax
tension pneumothorax
pulmonary edema
mesothelioma
small cell lung cancer
lung abscess
GI bleed
lower GI bleed
esophageal varices
Barrett's esophagus
esophagitis
eosinophilic esophagitis
achalasia
Mallory-Weiss tear
hiatal hernia
gastroparesis
H. pylori infection
C. diff colitis
Clostridioides difficile infection
ischemic colitis
microscopic colitis
diverticulosis
large bowel obstruction
ileus
sigmoid volvulus
anal fissure
perianal abscess
fecal incontinence
hepatic encephalopathy
ascites
spontaneous bacterial peritonitis
NAFLD
NASH
alcoholic hepatitis
autoimmune hepatitis
primary biliary cholangitis
primary sclerosing cholangitis
choledocholithiasis
ascending cholangitis
biliary colic
hemochromatosis
Wilson disease
jaundice
dysphagia
odynophagia
hematemesis
melena
hematochezia
bloating
dyspepsia
heartburn
esophageal cancer
gastric cancer
cholangiocarcinoma
pancreatic pseudocyst
chronic pancreatitis
acute pancreatitis
hepatitis A
umbilical hernia
ventral hernia
incisional hernia
pilonidal cyst
anal fistula
short bowel syndrome
portal hypertension
portal vein thrombosis
CKD stage 3
CKD stage 4
ESRD
AKI
hyperkalemia
hypokalemia
hyponatremia
hypernatremia
hypocalcemia
hypercalcemia
hypomagnesemia
hypophosphatemia
metabolic acidosis
metabolic alkalosis
respiratory acidosis
diabetic ketoacidosis
DKA
hyperosmolar hyperglycemic state
nephrotic syndrome
glomerulonephritis
IgA nephropathy
polycystic kidney disease
diabetic nephropathy
renal artery stenosis
hydronephrosis
urinary retention
overactive bladder
stress incontinence
neurogenic bladder
interstitial cystitis
cystitis
prostatitis
epididymitis
testicular torsion
erectile dysfunction
bladder cancer
testicular cancer
urethral stricture
varicocele
hydrocele
phimosis
renal colic
proteinuria
rhabdomyolysis
urosepsis
BPH
nocturia
urinary frequency
urinary urgency
ischemic stroke
hemorrhagic stroke
CVA
TIA
subdural hematoma
epidural hematoma
traumatic brain injury
concussion
status epilepticus
focal seizure
absence seizure
febrile seizure
Guillain-Barre syndrome
ALS
Huntington disease
essential tremor
restless legs syndrome
trigeminal neuralgia
cluster headache
normal pressure hydrocephalus
bacterial meningitis
viral meningitis
encephalitis
diabetic neuropathy
postherpetic neuralgia
cervical radiculopathy
lumbar spinal stenosis
cauda equina syndrome
cervical myelopathy
delirium
altered mental status
aphasia
dysarthria
hemiparesis
ataxia
vasovagal syncope
narcolepsy
Lewy body dementia
vascular dementia
mild cognitive impairment
meningioma
brain metastases
tremor
paresthesia
panic disorder
social anxiety disorder
obsessive-compulsive disorder
OCD
schizoaffective disorder
borderline personality disorder
adjustment disorder
persistent depressive disorder
postpartum depression
bulimia nervosa
binge eating disorder
autism spectrum disorder
alcohol withdrawal
delirium tremens
cocaine use disorder
cannabis use disorder
tobacco use disorder
suicidal ideation
MDD
GAD
psychosis
catatonia
prediabetes
hypoglycemia
hyperglycemia
T2DM
T1DM
primary hyperparathyroidism
secondary hyperparathyroidism
hypoparathyroidism
papillary thyroid carcinoma
goiter
thyroid storm
myxedema coma
subclinical hypothyroidism
Addison disease
pheochromocytoma
primary aldosteronism
SIADH
diabetes insipidus
pituitary adenoma
prolactinoma
acromegaly
hypogonadism
osteopenia
vitamin D deficiency
morbid obesity
hypertriglyceridemia
familial hypercholesterolemia
MRSA bacteremia
necrotizing fasciitis
diabetic foot infection
septic arthritis
genital herpes
chlamydia
gonorrhea
syphilis
trichomoniasis
bacterial vaginosis
vaginal candidiasis
oral thrush
candidemia
histoplasmosis
coccidioidomycosis
aspergillosis
Pneumocystis pneumonia
infectious mononucleosis
CMV infection
malaria
dengue fever
scabies
head lice
tinea pedis
tinea corporis
onychomycosis
impetigo
hand, foot, and mouth disease
measles
mumps
chickenpox
scarlet fever
strep throat
latent tuberculosis
AIDS
Rocky Mountain spotted fever
toxic shock syndrome
prosthetic joint infection
CLABSI
CAUTI
febrile neutropenia
triple-negative breast cancer
ductal carcinoma in situ
DCIS
metastatic breast cancer
head and neck cancer
laryngeal cancer
nasopharyngeal carcinoma
endometrial cancer
non-Hodgkin lymphoma
diffuse large B-cell lymphoma
DLBCL
follicular lymphoma
mantle cell lymphoma
CLL
AML
acute lymphoblastic leukemia
chronic myeloid leukemia
CML
myelodysplastic syndrome
MDS
polycythemia vera
essential thrombocythemia
myelofibrosis
MGUS
Waldenstrom macroglobulinemia
osteosarcoma
Ewing sarcoma
neuroblastoma
Wilms tumor
retinoblastoma
Merkel cell carcinoma
carcinoid tumor
GIST
tumor lysis syndrome
malignant pleural effusion
bone metastases
liver metastases
cachexia
seborrheic dermatitis
contact dermatitis
stasis dermatitis
seborrheic keratosis
actinic keratosis
hidradenitis suppurativa
vitiligo
alopecia areata
androgenetic alopecia
pemphigus vulgaris
bullous pemphigoid
lichen planus
pityriasis rosea
tinea versicolor
molluscum contagiosum
verruca vulgaris
keloid
lipoma
epidermoid cyst
sacral pressure injury
stage 2 pressure ulcer
venous stasis ulcer
diabetic foot ulcer
erythema multiforme
Stevens-Johnson syndrome
angioedema
hives
dermatomyositis
ingrown toenail
paronychia
folliculitis
intertrigo
xerosis
polymyalgia rheumatica
giant cell arteritis
Sjogren syndrome
systemic sclerosis
scleroderma
pseudogout
reactive arthritis
vasculitis
granulomatosis with polyangiitis
polymyositis
antiphospholipid syndrome
Behcet disease
juvenile idiopathic arthritis
trochanteric bursitis
olecranon bursitis
lateral epicondylitis
tennis elbow
plantar fasciitis
de Quervain tenosynovitis
trigger finger
Dupuytren contracture
adhesive capsulitis
frozen shoulder
costochondritis
ectopic pregnancy
spontaneous abortion
hyperemesis gravidarum
placenta previa
placental abruption
preterm labor
premature rupture of membranes
PPROM
HELLP syndrome
eclampsia
gestational hypertension
postpartum hemorrhage
chorioamnionitis
uterine fibroids
ovarian cyst
ovarian torsion
pelvic inflammatory disease
PCOS
menorrhagia
dysmenorrhea
amenorrhea
abnormal uterine bleeding
postmenopausal bleeding
hot flashes
vaginal atrophy
uterine prolapse
cervical dysplasia
infertility
mastitis
fibroadenoma
neonatal jaundice
hyperbilirubinemia
failure to thrive
RSV infection
Kawasaki disease
intussusception
pyloric stenosis
infantile colic
otitis externa
acute otitis media
developmental delay
cerebral palsy
Down syndrome
patent ductus arteriosus
ventricular septal defect
atrial septal defect
tetralogy of Fallot
coarctation of the aorta
bronchopulmonary dysplasia
necrotizing enterocolitis
hypospadias
cryptorchidism
nocturnal enuresis
roseola
fifth disease
femoral neck fracture
intertrochanteric fracture
vertebral compression fracture
scaphoid fracture
clavicle fracture
proximal humerus fracture
tibial plateau fracture
ankle fracture
trimalleolar fracture
metatarsal fracture
boxer's fracture
rib fracture
pelvic fracture
stress fracture
ACL tear
medial meniscus tear
Achilles tendon rupture
shoulder dislocation
patellar dislocation
spondylolisthesis
degenerative disc disease
herniated disc
scoliosis
kyphosis
lumbar strain
whiplash
avascular necrosis
compartment syndrome
patellofemoral pain syndrome
hallux valgus
bunion
Osgood-Schlatter disease
slipped capital femoral epiphysis
Legg-Calve-Perthes disease
open-angle glaucoma
angle-closure glaucoma
retinal detachment
central retinal artery occlusion
retinal vein occlusion
allergic conjunctivitis
bacterial conjunctivitis
viral conjunctivitis
blepharitis
chalazion
hordeolum
dry eye syndrome
keratitis
corneal abrasion
uveitis
optic neuritis
papilledema
amblyopia
strabismus
myopia
presbyopia
diplopia
blurred vision
floaters
ptosis
subconjunctival hemorrhage
pterygium
diabetic macular edema
keratoconus
sensorineural hearing loss
conductive hearing loss
hearing loss
tinnitus
cerumen impaction
Meniere disease
BPPV
vestibular neuritis
labyrinthitis
epistaxis
nasal polyps
deviated septum
chronic rhinosinusitis
peritonsillar abscess
laryngitis
epiglottitis
vocal cord paralysis
hoarseness
sore throat
TMJ disorder
cholesteatoma
tympanic membrane perforation
eustachian tube dysfunction
anosmia
postnasal drip
nasal congestion
rhinorrhea
pancytopenia
leukocytosis
leukopenia
neutropenia
lymphopenia
thrombocytosis
anemia of chronic disease
macrocytic anemia
hemolytic anemia
aplastic anemia
beta thalassemia
G6PD deficiency
hereditary spherocytosis
immune thrombocytopenia
ITP
thrombotic thrombocytopenic purpura
TTP
heparin-induced thrombocytopenia
HIT
disseminated intravascular coagulation
DIC
von Willebrand disease
factor V Leiden
hypercoagulable state
coagulopathy
folate deficiency
vaso-occlusive crisis
splenomegaly
hepatomegaly
lymphadenopathy
easy bruising
petechiae
night sweats
malaise
anorexia
unintentional weight loss
weight gain
polyuria
polydipsia
orthopnea
paroxysmal nocturnal dyspnea
wheezing
stridor
pleuritic chest pain
dyspnea on exertion
DOE
lightheadedness
presyncope
diaphoresis
flank pain
pelvic pain
rectal bleeding
BRBPR
lower extremity edema
pitting edema
pallor
cyanosis
digital clubbing
myalgia
arthralgia
neck pain
knee pain
shoulder pain
hip pain
chest tightness
otalgia
photophobia
generalized weakness
recurrent falls
gait instability
tachycardia
bradycardia
hypoxia
tachypnea
rigors
hiccups
abdominal distension
early satiety
epigastric pain
RUQ pain
productive cough
chronic cough
somnolence
lethargy
agitation
hallucinations
memory loss
daytime sleepiness
""")

PROCEDURES_MORE = _words("""
open appendectomy
open cholecystectomy
robotic prostatectomy
radical prostatectomy
partial nephrectomy
radical nephrectomy
total thyroidectomy
hemithyroidectomy
VATS lobectomy
lobectomy
wedge resection
pneumonectomy
segmentectomy
decortication
pleurodesis
esophagectomy
Nissen fundoplication
Heller myotomy
peroral endoscopic myotomy
partial gastrectomy
total gastrectomy
Roux-en-Y gastric bypass
laparoscopic sleeve gastrectomy
gastric banding
pancreaticoduodenectomy
distal pancreatectomy
splenectomy
partial hepatectomy
right hemicolectomy
left hemicolectomy
sigmoid colectomy
low anterior resection
abdominoperineal resection
Hartmann procedure
total colectomy
ileostomy
colostomy
colostomy reversal
small bowel resection
exploratory laparotomy
ex lap
diagnostic laparoscopy
lysis of adhesions
hemorrhoidectomy
rubber band ligation
fistulotomy
lateral internal sphincterotomy
pilonidal cystectomy
ventral hernia repair
umbilical hernia repair
incisional hernia repair
femoral hernia repair
hiatal hernia repair
CABG x3
CABG x2
CABG x4
off-pump CABG
aortic valve replacement
AVR
mitral valve repair
mitral valve replacement
MitraClip
balloon valvuloplasty
coronary stent placement
drug-eluting stent placement
balloon angioplasty
atherectomy
left heart catheterization
right heart catheterization
LHC
RHC
pericardiocentesis
pericardial window
dual-chamber pacemaker insertion
leadless pacemaker implantation
CRT-D implantation
AICD placement
loop recorder implantation
pulmonary vein isolation
AV node ablation
electrical cardioversion
DCCV
left atrial appendage occlusion
Watchman procedure
septal myectomy
LVAD implantation
heart transplant
intra-aortic balloon pump placement
IABP placement
ECMO
EVAR
TEVAR
open AAA repair
aortobifemoral bypass
fem-pop bypass
carotid artery stenting
peripheral angioplasty
embolectomy
mechanical thrombectomy
catheter-directed thrombolysis
IVC filter placement
IVC filter retrieval
endovenous ablation
sclerotherapy
AV fistula creation
AV graft placement
tunneled dialysis catheter placement
arterial line placement
A-line placement
Foley catheter placement
straight catheterization
NG tube placement
chest tube placement
tube thoracostomy
needle decompression
endotracheal intubation
rapid sequence intubation
extubation
cricothyrotomy
bag-mask ventilation
CPR
defibrillation
transcutaneous pacing
transvenous pacemaker placement
arthrocentesis
knee aspiration
corticosteroid joint injection
trigger point injection
bone marrow aspiration
external ventricular drain placement
EVD placement
VP shunt placement
laceration repair
wound vac placement
negative pressure wound therapy
splinting
casting
closed reduction
excisional biopsy
punch biopsy
shave biopsy
core needle biopsy
stereotactic breast biopsy
CT-guided biopsy
sentinel lymph node biopsy
axillary lymph node dissection
renal biopsy
prostate biopsy
endometrial biopsy
cervical biopsy
colposcopy
LEEP
cone biopsy
temporal artery biopsy
muscle biopsy
transbronchial biopsy
PEG tube placement
percutaneous endoscopic gastrostomy
J-tube placement
percutaneous cholecystostomy
percutaneous nephrostomy
ureteral stent placement
ureteroscopy
lithotripsy
ESWL
percutaneous nephrolithotomy
TURBT
vasectomy
circumcision
orchiectomy
orchiopexy
hydrocelectomy
suprapubic catheter placement
midurethral sling
ERCP
ERCP with stent placement
biliary sphincterotomy
flexible sigmoidoscopy
push enteroscopy
polypectomy
endoscopic mucosal resection
variceal banding
esophageal dilation
esophageal stent placement
EGD with biopsy
colonoscopy with polypectomy
screening colonoscopy
direct laryngoscopy
flexible bronchoscopy
bronchoalveolar lavage
EBUS-TBNA
thoracoscopy
VATS
mediastinoscopy
hysteroscopy
arthroscopic meniscectomy
knee arthroscopy
shoulder arthroscopy
total shoulder arthroplasty
reverse total shoulder arthroplasty
hemiarthroplasty
unicompartmental knee arthroplasty
revision total knee arthroplasty
TKA
THA
TKR
THR
intramedullary nailing
closed reduction and percutaneous pinning
CRPP
external fixation
kyphoplasty
vertebroplasty
ACDF
anterior cervical discectomy and fusion
microdiscectomy
foraminotomy
TLIF
posterior spinal fusion
meniscus repair
Achilles tendon repair
bunionectomy
trigger finger release
fasciotomy
below-knee amputation
BKA
above-knee amputation
toe amputation
transmetatarsal amputation
ganglion cyst excision
hardware removal
craniotomy
decompressive craniectomy
burr hole evacuation
deep brain stimulation
spinal cord stimulator placement
vagus nerve stimulator implantation
aneurysm clipping
endovascular coiling
brain tumor resection
botulinum toxin injection
radiofrequency ablation
medial branch block
facet joint injection
sacroiliac joint injection
stellate ganglion block
occipital nerve block
plasmapheresis
phacoemulsification
trabeculectomy
pars plana vitrectomy
panretinal photocoagulation
intravitreal injection
YAG laser capsulotomy
laser peripheral iridotomy
selective laser trabeculoplasty
corneal transplant
PRK
blepharoplasty
strabismus surgery
scleral buckle
myringotomy
tympanostomy tube placement
tympanoplasty
mastoidectomy
cochlear implantation
functional endoscopic sinus surgery
FESS
turbinate reduction
rhinoplasty
nasal packing
uvulopalatopharyngoplasty
UPPP
parotidectomy
neck dissection
laryngectomy
cerumen removal
ear irrigation
spontaneous vaginal delivery
NSVD
vacuum-assisted delivery
forceps delivery
repeat cesarean section
induction of labor
epidural anesthesia
amniocentesis
chorionic villus sampling
cervical cerclage
D&C
dilation and evacuation
endometrial ablation
myomectomy
TAH-BSO
total laparoscopic hysterectomy
vaginal hysterectomy
oophorectomy
salpingectomy
bilateral salpingo-oophorectomy
ovarian cystectomy
IUD insertion
IUD removal
in vitro fertilization
IVF
intrauterine insemination
episiotomy
perineal laceration repair
breast reduction
breast reconstruction
modified radical mastectomy
bilateral mastectomy
speech therapy
cardiac rehabilitation
pulmonary rehabilitation
CRRT
continuous renal replacement therapy
plasma exchange
phototherapy
hyperbaric oxygen therapy
oxygen therapy
BiPAP
CPAP
noninvasive ventilation
high-flow nasal cannula
stereotactic radiosurgery
SBRT
brachytherapy
proton therapy
IMRT
whole brain radiation therapy
adjuvant chemotherapy
neoadjuvant chemotherapy
concurrent chemoradiation
autologous stem cell transplant
allogeneic stem cell transplant
bone marrow transplant
CAR T-cell therapy
androgen deprivation therapy
radioactive iodine ablation
dialysis
transcranial magnetic stimulation
ECT
dialectical behavior therapy
psychotherapy
exposure therapy
family therapy
group therapy
motivational interviewing
alcohol detoxification
wound care
chest physiotherapy
nebulizer treatment
fluid resuscitation
TPN
total parenteral nutrition
tube feeding
red blood cell transfusion
platelet transfusion
FFP transfusion
exchange transfusion
therapeutic phlebotomy
cryotherapy
cryoablation
microwave ablation
TACE
transarterial chemoembolization
Y-90 radioembolization
uterine artery embolization
prostate artery embolization
TIPS
gastric lavage
manual disimpaction
Mohs surgery
wide local excision
electrodesiccation and curettage
cyst excision
lipoma excision
split-thickness skin graft
free flap reconstruction
escharotomy
allergy immunotherapy
""")

TESTS_MORE = _words("""
CBC with differential
absolute neutrophil count
ANC
reticulocyte count
peripheral blood smear
MCV
RDW
hemoglobin electrophoresis
haptoglobin
LDH
fibrinogen
anti-Xa level
PF4 antibody
type and screen
type and crossmatch
direct Coombs test
serum iron
TIBC
transferrin saturation
folate level
methylmalonic acid
homocysteine
free T3
TPO antibodies
thyroglobulin
cortisol
AM cortisol
ACTH stimulation test
dexamethasone suppression test
ACTH
PTH
intact PTH
25-hydroxyvitamin D
prolactin
FSH
LH
estradiol level
testosterone level
beta-hCG
urine pregnancy test
quantitative hCG
AFP
CEA
CA-125
CA 19-9
LFTs
hepatic function panel
GGT
direct bilirubin
total protein
ammonia
serum osmolality
urine osmolality
urine sodium
urine protein-to-creatinine ratio
urine albumin-to-creatinine ratio
24-hour urine protein
urine drug screen
UDS
blood alcohol level
acetaminophen level
salicylate level
digoxin level
lithium level
vancomycin trough
valproic acid level
tacrolimus level
CK
creatine kinase
CK-MB
high-sensitivity troponin
troponin T
anion gap
ionized calcium
uric acid
lactic acid
venous blood gas
VBG
ABG
beta-hydroxybutyrate
urine ketones
C-peptide
insulin level
fructosamine
oral glucose tolerance test
OGTT
fingerstick glucose
point-of-care glucose
ANA
rheumatoid factor
anti-CCP antibody
anti-dsDNA antibody
complement levels
ANCA
HLA-B27
ASO titer
SPEP
serum protein electrophoresis
UPEP
serum free light chains
hepatitis C antibody
HCV RNA
hepatitis B surface antigen
HIV viral load
CD4 count
RPR
QuantiFERON-TB Gold
PPD
tuberculin skin test
Monospot test
CMV PCR
respiratory viral panel
rapid influenza test
RSV PCR
SARS-CoV-2 antigen test
Legionella urinary antigen
C. diff toxin
stool culture
stool ova and parasites
fecal occult blood test
FOBT
FIT test
fecal calprotectin
H. pylori breath test
H. pylori stool antigen
gonorrhea and chlamydia NAAT
wet mount
KOH prep
Gram stain
wound culture
CSF analysis
CSF culture
pleural fluid analysis
synovial fluid analysis
fungal culture
AFB smear
MRSA nasal swab
Pap smear
HPV test
BRCA genetic testing
CT abdomen/pelvis
CT abdomen/pelvis with contrast
CT chest
CT chest with contrast
CTA chest
CT pulmonary angiogram
CTPA
CT head without contrast
noncontrast head CT
CT cervical spine
CTA head and neck
CT perfusion
CT urogram
coronary CT angiography
coronary calcium score
low-dose CT chest
high-resolution CT chest
HRCT
CT sinus
CT maxillofacial
MRI brain with contrast
MRI brain without contrast
MRA head
MRA neck
MRI cervical spine
MRI thoracic spine
MRI knee
MRI shoulder
MRI pelvis
MRI abdomen
MRCP
cardiac MRI
breast MRI
prostate MRI
knee X-ray
hand X-ray
wrist X-ray
ankle X-ray
foot X-ray
hip X-ray
pelvis X-ray
lumbar spine X-ray
cervical spine X-ray
shoulder X-ray
abdominal X-ray
KUB
portable chest X-ray
CXR
skeletal survey
bone scan
V/Q scan
HIDA scan
gastric emptying study
thyroid ultrasound
thyroid uptake scan
pelvic ultrasound
transvaginal ultrasound
obstetric ultrasound
scrotal ultrasound
RUQ ultrasound
bladder scan
post-void residual
carotid duplex
lower extremity venous duplex
ankle-brachial index
ABI
transthoracic echocardiogram
TTE
transesophageal echocardiogram
TEE
dobutamine stress echo
nuclear stress test
myocardial perfusion imaging
exercise treadmill test
PET/CT
bone density scan
modified barium swallow
barium swallow
barium enema
upper GI series
small bowel follow-through
nonstress test
biophysical profile
diagnostic mammogram
screening mammogram
breast ultrasound
liver elastography
FibroScan
12-lead ECG
event monitor
Zio patch
ambulatory blood pressure monitoring
tilt table test
polysomnography
sleep study
home sleep apnea test
multiple sleep latency test
nerve conduction study
video EEG
continuous EEG
visual evoked potentials
audiogram
tympanometry
visual acuity
visual field testing
tonometry
intraocular pressure
optical coherence tomography
FEV1
FVC
DLCO
peak expiratory flow
six-minute walk test
methacholine challenge test
cardiopulmonary exercise test
urodynamic studies
uroflowmetry
esophageal manometry
anorectal manometry
24-hour pH monitoring
MoCA
MMSE
PHQ-9
systolic blood pressure
diastolic blood pressure
pulse
pulse oximetry
body temperature
weight
height
mean arterial pressure
MAP
central venous pressure
CVP
pain score
head circumference
urine output
end-tidal CO2
EtCO2
BP
HR
RR
orthostatic vital signs
""")

ANATOMY_MORE = _words("""
left upper lobe
right lower lobe
left lung
right lung
lingula
right atrium
tricuspid valve
pulmonic valve
interventricular septum
pericardium
aorta
ascending aorta
descending aorta
aortic arch
abdominal aorta
thoracic aorta
inferior vena cava
superior vena cava
pulmonary artery
right coronary artery
left circumflex artery
left main coronary artery
right internal carotid artery
left common carotid artery
vertebral artery
basilar artery
left middle cerebral artery
posterior cerebral artery
anterior cerebral artery
subclavian artery
brachial artery
radial artery
ulnar artery
common iliac artery
external iliac artery
superficial femoral artery
popliteal artery
posterior tibial artery
dorsalis pedis artery
renal artery
superior mesenteric artery
celiac trunk
portal vein
hepatic vein
splenic vein
femoral vein
popliteal vein
great saphenous vein
right internal jugular vein
cephalic vein
basilic vein
right antecubital fossa
left lower quadrant
right upper quadrant
periumbilical region
umbilicus
suprapubic region
hypogastrium
left flank
right flank
cecum
ascending colon
transverse colon
descending colon
hepatic flexure
splenic flexure
terminal ileum
ileum
jejunum
appendix
anus
anal canal
gastroesophageal junction
gastric antrum
pylorus
gastric fundus
common bile duct
pancreatic head
pancreatic tail
right hepatic lobe
peritoneum
omentum
mesentery
retroperitoneum
inguinal canal
left groin
right ureter
left ureter
renal pelvis
adrenal gland
left adrenal gland
bladder neck
scrotum
testis
epididymis
penis
vagina
vulva
fallopian tube
left ovary
right adnexa
endometrium
perineum
pelvic floor
occipital lobe
parietal lobe
basal ganglia
thalamus
brainstem
pons
medulla
hippocampus
corpus callosum
lateral ventricle
internal capsule
pituitary gland
cerebral cortex
left hemisphere
right frontal lobe
optic nerve
facial nerve
trigeminal nerve
vagus nerve
sciatic nerve
median nerve
ulnar nerve
brachial plexus
cauda equina
C5-C6
L4-L5
L5-S1
intervertebral disc
coccyx
left sacroiliac joint
orbit
mandible
maxilla
maxillary sinus
frontal sinus
temporomandibular joint
oral cavity
tongue
hard palate
soft palate
uvula
gingiva
parotid gland
submandibular gland
epiglottis
vocal cords
nasopharynx
oropharynx
external auditory canal
middle ear
cochlea
mastoid
nasal cavity
conjunctiva
sclera
iris
lens
optic disc
macula
eyelid
lacrimal gland
forehead
occiput
face
right distal radius
left distal radius
scaphoid
fifth metacarpal
phalanges
thumb
right index finger
olecranon
lateral epicondyle
medial epicondyle
rotator cuff
supraspinatus tendon
glenohumeral joint
acromioclavicular joint
scapula
proximal humerus
left femoral neck
greater trochanter
acetabulum
patella
medial meniscus
lateral meniscus
anterior cruciate ligament
medial collateral ligament
tibial plateau
medial malleolus
lateral malleolus
Achilles tendon
calcaneus
talus
metatarsals
first metatarsophalangeal joint
left great toe
toes
plantar fascia
quadriceps
hamstring
right buttock
left thigh
shin
left lower extremity
right lower extremity
bilateral lower extremities
left upper extremity
right upper extremity
lower back
paraspinal muscles
trapezius
left deltoid
iliac crest
pubic symphysis
left sixth rib
xiphoid process
diaphragm
mediastinum
pleura
right mainstem bronchus
carina
bone marrow
axillary lymph nodes
inguinal lymph nodes
supraclavicular lymph nodes
mediastinal lymph nodes
thymus
parathyroid glands
left thyroid lobe
right breast
left breast
nipple
upper outer quadrant
dorsum of the hand
palm
sole of the foot
sacral region
perianal region
right hemithorax
precordium
anterior abdominal wall
""")

MEDICATIONS_MORE = _words("""
ampicillin
ampicillin-sulbactam
penicillin G
penicillin VK
dicloxacillin
nafcillin
oxacillin
cefuroxime
cefdinir
cefpodoxime
ceftazidime
ceftaroline
cefoxitin
ertapenem
imipenem-cilastatin
aztreonam
daptomycin
tobramycin
amikacin
minocycline
erythromycin
rifampin
isoniazid
pyrazinamide
ethambutol
rifaximin
Xifaxan
fidaxomicin
fosfomycin
mupirocin
Bactroban
silver sulfadiazine
dapsone
voriconazole
posaconazole
micafungin
amphotericin B
terbinafine
Lamisil
clotrimazole
ketoconazole
famciclovir
valganciclovir
remdesivir
Paxlovid
Biktarvy
dolutegravir
Epclusa
entecavir
ivermectin
albendazole
atovaquone
permethrin
benazepril
enalapril
ramipril
candesartan
telmisartan
sacubitril-valsartan
Entresto
labetalol
nebivolol
clonidine
doxazosin
prazosin
minoxidil
metolazone
acetazolamide
triamterene-hydrochlorothiazide
ezetimibe
Zetia
fenofibrate
evolocumab
Repatha
icosapent ethyl
Crestor
Zocor
flecainide
propafenone
dofetilide
dronedarone
Multaq
ranolazine
isosorbide dinitrate
milrinone
dobutamine
norepinephrine
vasopressin
phenylephrine
esmolol
nicardipine
adenosine
atropine
alteplase
tenecteplase
argatroban
bivalirudin
fondaparinux
cilostazol
Brilinta
Pradaxa
Lovenox
Cozaar
Diovan
Coreg
Lopressor
Cardizem
Imdur
Aldactone
Bumex
Kcentra
idarucizumab
andexanet alfa
protamine sulfate
phytonadione
insulin detemir
insulin degludec
regular insulin
Lantus
Levemir
Tresiba
Humalog
Novolog
Basaglar
Toujeo
Humulin R
tirzepatide
Mounjaro
Trulicity
Victoza
Rybelsus
Farxiga
saxagliptin
Tradjenta
repaglinide
acarbose
glucagon
dextrose 50%
Janumet
liothyronine
Cytomel
Armour Thyroid
cinacalcet
calcitriol
ergocalciferol
teriparatide
raloxifene
risedronate
Fosamax
Prolia
cabergoline
octreotide
desmopressin
testosterone cypionate
estradiol
medroxyprogesterone
Depo-Provera
norethindrone
Premarin
levonorgestrel
clomiphene
megestrol
oxytocin
Pitocin
misoprostol
methylergonovine
terbutaline
magnesium sulfate
RhoGAM
Spiriva
Flovent
Pulmicort
Singulair
ProAir HFA
Atrovent
DuoNeb
ipratropium-albuterol
fluticasone-salmeterol
budesonide-formoterol
Breo Ellipta
Trelegy Ellipta
umeclidinium-vilanterol
Anoro Ellipta
beclomethasone
roflumilast
theophylline
omalizumab
Xolair
mepolizumab
dupilumab
Dupixent
benralizumab
guaifenesin
Mucinex
benzonatate
dextromethorphan
codeine
pirfenidone
nintedanib
acetylcysteine
dornase alfa
Prilosec
Pepcid
Zofran
Reglan
sucralfate
Carafate
bismuth subsalicylate
Pepto-Bismol
simethicone
dicyclomine
hyoscyamine
linaclotide
Linzess
lubiprostone
bisacodyl
Dulcolax
MiraLAX
Colace
magnesium citrate
GoLYTELY
ursodiol
cholestyramine
pancrelipase
Creon
azathioprine
mercaptopurine
certolizumab pegol
golimumab
Remicade
Entyvio
Stelara
risankizumab
Skyrizi
tofacitinib
Xeljanz
upadacitinib
Rinvoq
Lialda
balsalazide
promethazine
Phenergan
scopolamine
meclizine
aprepitant
dronabinol
Depakote
divalproex
oxcarbazepine
Trileptal
lacosamide
Vimpat
zonisamide
clobazam
phenobarbital
fosphenytoin
Dilantin
Lamictal
Topamax
rizatriptan
Maxalt
erenumab
Aimovig
rimegepant
rivastigmine
galantamine
Aricept
Namenda
Sinemet
rasagiline
amantadine
entacapone
benztropine
riluzole
pyridostigmine
glatiramer acetate
ocrelizumab
Ocrevus
natalizumab
fingolimod
dimethyl fumarate
methocarbamol
Flexeril
Zanaflex
dantrolene
Lyrica
Cymbalta
Effexor XR
Wellbutrin XL
Paxil
Celexa
Remeron
desvenlafaxine
vortioxetine
Trintellix
fluvoxamine
clomipramine
doxepin
buspirone
Abilify
Risperdal
Zyprexa
ziprasidone
lurasidone
Latuda
paliperidone
Invega Sustenna
clozapine
brexpiprazole
cariprazine
chlorpromazine
fluphenazine
Haldol
Lithobid
Klonopin
Valium
temazepam
eszopiclone
suvorexant
methylphenidate
Concerta
Adderall
lisdexamfetamine
Vyvanse
atomoxetine
guanfacine
modafinil
naltrexone
Vivitrol
acamprosate
disulfiram
Suboxone
Narcan
varenicline
Chantix
nicotine patch
chlordiazepoxide
thiamine
Dilaudid
MS Contin
OxyContin
Norco
tapentadol
hydrocodone-acetaminophen
Toradol
Celebrex
Mobic
Aleve
indomethacin
nabumetone
lidocaine patch
diclofenac gel
Voltaren gel
Fioricet
ketamine
propofol
midazolam
Versed
rocuronium
succinylcholine
sugammadex
dexmedetomidine
Precedex
lidocaine
bupivacaine
probenecid
Uloric
Colcrys
leflunomide
Plaquenil
etanercept
Enbrel
abatacept
tocilizumab
secukinumab
Cosentyx
apremilast
Otezla
belimumab
cyclophosphamide
capecitabine
Xeloda
5-fluorouracil
oxaliplatin
irinotecan
gemcitabine
docetaxel
pemetrexed
etoposide
vincristine
cytarabine
bendamustine
temozolomide
bevacizumab
Avastin
cetuximab
pertuzumab
Herceptin
Keytruda
Opdivo
ipilimumab
atezolizumab
durvalumab
osimertinib
Tagrisso
imatinib
Gleevec
ibrutinib
venetoclax
lenalidomide
Revlimid
bortezomib
daratumumab
palbociclib
Ibrance
olaparib
enzalutamide
abiraterone
leuprolide
Lupron Depot
bicalutamide
fulvestrant
exemestane
Arimidex
Rituxan
azacitidine
hydroxyurea
leucovorin
pegfilgrastim
Neulasta
darbepoetin alfa
rasburicase
everolimus
sirolimus
Prograf
CellCept
antithymocyte globulin
IVIG
iron sucrose
Venofer
ferric carboxymaltose
ferrous gluconate
tranexamic acid
eltrombopag
deferasirox
sevelamer
Renvela
calcium acetate
patiromer
sodium zirconium cyclosilicate
Lokelma
sodium polystyrene sulfonate
Kayexalate
sodium bicarbonate
calcium gluconate
mirabegron
Myrbetriq
solifenacin
tolterodine
Flomax
alfuzosin
dutasteride
Proscar
tadalafil
Cialis
Viagra
phenazopyridine
bethanechol
tretinoin
isotretinoin
adapalene
benzoyl peroxide
triamcinolone
Kenalog
clobetasol
betamethasone
hydrocortisone cream
desonide
fluocinonide
selenium sulfide
pimecrolimus
calcipotriene
latanoprost
Xalatan
timolol
brimonidine
dorzolamide-timolol
Cosopt
bimatoprost
pilocarpine
artificial tears
Restasis
prednisolone acetate
ranibizumab
aflibercept
Eylea
olopatadine
cyclopentolate
proparacaine
fexofenadine
Allegra
Claritin
Zyrtec
levocetirizine
Benadryl
Flonase
azelastine
oxymetazoline
Afrin
pseudoephedrine
Sudafed
EpiPen
Tums
Imodium
dimenhydrinate
multivitamin
fish oil
ascorbic acid
psyllium
Metamucil
activated charcoal
flumazenil
fomepizole
digoxin immune fab
calcium chloride
normal saline
lactated Ringer's
D5W
mannitol
hypertonic saline
""")

LISTS = {
    "FIRST": FIRST_NAMES_MORE,
    "LAST": LAST_NAMES_MORE,
    "CITY": CITIES_MORE,
    "STATE": STATES_MORE,
    "STREET_NAME": STREET_NAMES_MORE,
    "HOSP_HEAD": HOSPITAL_HEADS_MORE,
    "COND": CONDITIONS_MORE,
    "MED": MEDICATIONS_MORE,
    "PROC": PROCEDURES_MORE,
    "ANAT": ANATOMY_MORE,
    "TEST": TESTS_MORE,
}
